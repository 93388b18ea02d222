import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, customType, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Raw bytes (document contents). */
const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v)),
});

/**
 * HTTP Basic key/secret pairs of the LRS, issued per institution by an ADMIN. The secret is
 * shown once and stored as an scrypt hash (`scrypt$N$r$p$salt$hash`, base64url parts). The key
 * is the Basic user name: unique across institutions, since a request names no institution
 * before its credential is found.
 */
export const xapiCredentials = pgTable(
  'xapi_credentials',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    key: text('key').notNull(),
    secretHash: text('secret_hash').notNull(),
    name: text('name').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('xapi_credentials_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('xapi_credentials_key_uq').on(t.key),
    index('xapi_credentials_inst_created_idx').on(t.institutionId, t.createdAt),
  ],
);

/**
 * Statements as stored (the full statement JSON the LRS returns in the `exact` format) with
 * the columns the query filters need. `seq` is a global sequence taken under the institution's
 * write lock, so per institution it follows commit order and `stored` never decreases along it:
 * the `more` cursor and `ascending` order by it. Keys of IRIs and agents are UUID-shaped digests
 * (see xapi.keys.ts), so index entries stay small whatever the IRI length.
 */
export const xapiStatements = pgTable(
  'xapi_statements',
  {
    institutionId: text('institution_id').notNull(),
    id: uuid('id').notNull(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    stored: ts('stored').notNull(),
    verbKey: uuid('verb_key').notNull(),
    registration: uuid('registration'),
    /** Set when a voiding statement names this one (queries leave it out; voidedStatementId finds it). */
    voided: boolean('voided').notNull().default(false),
    /** The statement this one's object refers to (StatementRef), voiding or not. */
    refTarget: uuid('ref_target'),
    /** For a voiding statement: the statement it voids. */
    voidsId: uuid('voids_id'),
    statement: jsonb('statement').$type<Record<string, unknown>>().notNull(),
  },
  (t) => [
    primaryKey({ name: 'xapi_statements_pk', columns: [t.institutionId, t.id] }),
    unique('xapi_statements_inst_seq_uq').on(t.institutionId, t.seq),
    index('xapi_statements_inst_verb_idx').on(t.institutionId, t.verbKey, t.seq),
    index('xapi_statements_inst_registration_idx')
      .on(t.institutionId, t.registration, t.seq)
      .where(sql`registration is not null`),
    index('xapi_statements_inst_stored_idx').on(t.institutionId, t.stored),
    // Statements that refer to another one: the StatementRef filter rule walks them.
    index('xapi_statements_inst_ref_idx')
      .on(t.institutionId, t.seq)
      .where(sql`ref_target is not null`),
    index('xapi_statements_inst_voids_idx')
      .on(t.institutionId, t.voidsId)
      .where(sql`voids_id is not null`),
  ],
);

/*
 * The index tables' keys lead with the filter key (agent or activity), which is what queries
 * need; their foreign keys to the statement have no index of their own because statements are
 * never deleted (xAPI voids them). Deleting statements in bulk means deleting these rows first.
 */

/**
 * Every agent or identified group a statement names, once per statement: `asActor` (the actor),
 * `direct` (the actor or the object: what the `agent` filter matches) and otherwise a related
 * one (authority, instructor, team, or inside a SubStatement: `related_agents`).
 */
export const xapiStatementAgents = pgTable(
  'xapi_statement_agents',
  {
    institutionId: text('institution_id').notNull(),
    id: bigserial('id', { mode: 'number' }).notNull(),
    statementSeq: bigint('statement_seq', { mode: 'number' }).notNull(),
    agentKey: uuid('agent_key').notNull(),
    asActor: boolean('as_actor').notNull(),
    direct: boolean('direct').notNull(),
  },
  (t) => [
    unique('xapi_statement_agents_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('xapi_statement_agents_key_uq').on(t.institutionId, t.agentKey, t.statementSeq),
    foreignKey({
      name: 'xapi_statement_agents_statement_fk',
      columns: [t.institutionId, t.statementSeq],
      foreignColumns: [xapiStatements.institutionId, xapiStatements.seq],
    }).onDelete('cascade'),
  ],
);

/**
 * Every activity a statement names, once per statement: `direct` when it is the statement's
 * object (the `activity` filter), otherwise from context activities or a SubStatement
 * (`related_activities`).
 */
export const xapiStatementActivities = pgTable(
  'xapi_statement_activities',
  {
    institutionId: text('institution_id').notNull(),
    id: bigserial('id', { mode: 'number' }).notNull(),
    statementSeq: bigint('statement_seq', { mode: 'number' }).notNull(),
    activityKey: uuid('activity_key').notNull(),
    direct: boolean('direct').notNull(),
  },
  (t) => [
    unique('xapi_statement_activities_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('xapi_statement_activities_key_uq').on(t.institutionId, t.activityKey, t.statementSeq),
    foreignKey({
      name: 'xapi_statement_activities_statement_fk',
      columns: [t.institutionId, t.statementSeq],
      foreignColumns: [xapiStatements.institutionId, xapiStatements.seq],
    }).onDelete('cascade'),
  ],
);

/** The LRS's canonical definition of each activity, merged from the statements that define it. */
export const xapiActivities = pgTable(
  'xapi_activities',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    activityKey: uuid('activity_key').notNull(),
    activityId: text('activity_id').notNull(),
    definition: jsonb('definition').$type<Record<string, unknown>>().notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('xapi_activities_inst_id_uq').on(t.institutionId, t.id), uniqueIndex('xapi_activities_key_uq').on(t.institutionId, t.activityKey)],
);

export const XAPI_DOCUMENT_KINDS = ['state', 'activity_profile', 'agent_profile'] as const;
export type XapiDocumentKind = (typeof XAPI_DOCUMENT_KINDS)[number];

/**
 * Documents of the state, activity profile and agent profile resources, stored as the bytes
 * received. `scopeKey` is the digest of the whole address (kind, activity, agent, registration,
 * document id): one row per address. `etag` is the SHA-1 of the content (hex).
 */
export const xapiDocuments = pgTable(
  'xapi_documents',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    kind: text('kind', { enum: XAPI_DOCUMENT_KINDS }).notNull(),
    scopeKey: uuid('scope_key').notNull(),
    activityKey: uuid('activity_key'),
    agentKey: uuid('agent_key'),
    registration: uuid('registration'),
    documentId: text('document_id').notNull(),
    contentType: text('content_type').notNull(),
    content: bytea('content').notNull(),
    etag: text('etag').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('xapi_documents_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('xapi_documents_scope_uq').on(t.institutionId, t.scopeKey),
    index('xapi_documents_list_idx').on(t.institutionId, t.kind, t.activityKey, t.agentKey, t.updatedAt),
  ],
);

/** Attachment contents, one stored object per institution and SHA-2 hash (statements name them by `sha2`). */
export const xapiAttachments = pgTable(
  'xapi_attachments',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    sha2: text('sha2').notNull(),
    contentType: text('content_type').notNull(),
    length: integer('length').notNull(),
    storageKey: text('storage_key').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [unique('xapi_attachments_inst_id_uq').on(t.institutionId, t.id), uniqueIndex('xapi_attachments_sha2_uq').on(t.institutionId, t.sha2)],
);

export type XapiCredential = typeof xapiCredentials.$inferSelect;
export type XapiStatementRow = typeof xapiStatements.$inferSelect;
export type XapiDocument = typeof xapiDocuments.$inferSelect;
