import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { Config } from '../../config.js';
import type { Clock } from '../../platform/clock.js';
import { withTx } from '../../platform/context.js';
import { rawRows, type DbOrTx } from '../../platform/db/client.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { newId } from '../../platform/ids.js';
import { enqueueMany } from '../../platform/queue/queue.js';
import { getSettings } from '../institutions/institutions.service.js';
import { CHANNELS, definitionOf, preferenceKeyOf, type Channel, type Frequency, type NotificationDefinition } from './notifications.definitions.js';
import { DEFAULT_DAILY_TIME, DEFAULT_WEEKLY_DAY, DEFAULT_WEEKLY_TIME, digestKindOf, nextDigestAt, type DigestKind, type DigestTimes } from './notifications.digest-times.js';
import { absoluteActionUrl, renderHtml, renderText } from './notifications.render.js';
import {
  notificationDevices,
  notificationDigestSettings,
  notificationPreferences,
  notificationTemplates,
  type DeliveryStatus,
  type NotificationAttachment,
} from './notifications.tables.js';

export interface NotifyInput {
  institutionId: string;
  /** A key of notifications.definitions.ts. */
  key: string;
  /** Person ids (CRM Contact ids for contacts, user ids for staff); duplicates are sent once. */
  recipients: readonly string[];
  /** Free-form context stored on every row and given to the templates. */
  metadata?: Record<string, unknown>;
  /** Where the notification leads (a path of the web app, or an absolute URL). */
  actionUrl?: string | null;
  /** Deliver now even to people whose frequency is a digest (never overrides OFF or a disabled channel). */
  forceImmediate?: boolean;
  /** At most one notification per recipient, key and channel with this value, however often notify runs. */
  dedupeKey?: string;
  /** Stored files the e-mail carries (e-mail rows only; the worker reads them from storage when it sends). */
  attachments?: NotificationAttachment[];
}

/** What notify needs: the transaction of the change (or the database), the clock, and the service address. */
export interface NotifyScope {
  db: DbOrTx;
  clock: Clock;
  config: Pick<Config, 'publicBaseUrl'>;
  /** True when `db` is already a transaction (a ServiceContext inside withTx). */
  inTx?: boolean;
}

export interface NotifySummary {
  recipients: number;
  /** Delivery rows written (fewer than recipients × 3 when `dedupeKey` matched earlier ones). */
  rows: number;
  /** Recipients who got rows in this call (with `dedupeKey`: those not notified before). */
  newRecipients: number;
  /** `notifications.deliver` jobs enqueued. */
  batches: number;
}

/** Recipients per delivery batch: one worker job works one batch. */
export const DELIVERY_BATCH_SIZE = 200;
/** Recipients per INSERT statement (three rows each). */
const INSERT_CHUNK = 2_000;

export class UnknownNotificationKeyError extends Error {}

interface Effective {
  inApp: boolean;
  email: boolean;
  push: boolean;
  frequency: Frequency;
}

type StoredPreference = Pick<typeof notificationPreferences.$inferSelect, 'emailEnabled' | 'pushEnabled' | 'inAppEnabled' | 'frequency'>;

/** A stored preference row overlaid on a definition's defaults (spec 4.7). */
export function effectivePreference(d: NotificationDefinition, stored: StoredPreference | undefined): Effective {
  const on = (channel: Channel, value: boolean | null | undefined) =>
    d.canDisable ? (value ?? d.defaultChannels.includes(channel)) : d.defaultChannels.includes(channel) || value === true;
  // Rule 3: a key whose frequency cannot change is IMMEDIATE; rule 2: an undisableable key is never OFF.
  let frequency: Frequency = (d.canChangeFrequency && stored?.frequency) || 'IMMEDIATE';
  if (frequency === 'OFF' && !d.canDisable) frequency = 'IMMEDIATE';
  return { inApp: on('IN_APP', stored?.inAppEnabled), email: on('email', stored?.emailEnabled), push: on('push', stored?.pushEnabled), frequency };
}

/** The templates of `key` for an institution: its override per channel, else the system default. */
async function templatesFor(db: DbOrTx, institutionId: string, key: string) {
  const rows = await db
    .select()
    .from(notificationTemplates)
    .where(and(eq(notificationTemplates.key, key), or(eq(notificationTemplates.institutionId, institutionId), isNull(notificationTemplates.institutionId))));
  const byChannel = new Map<Channel, (typeof rows)[number]>();
  for (const row of rows) {
    const current = byChannel.get(row.channel);
    if (!current || (current.institutionId === null && row.institutionId !== null)) byChannel.set(row.channel, row);
  }
  return byChannel;
}

const anyOf = (ids: readonly string[]) => sql`any(${sql.param(ids)}::text[])`;

/** Digest times of users (stored row over defaults; zone: override, else the institution's). */
export async function digestTimesOf(db: DbOrTx, institutionId: string, userIds: readonly string[]): Promise<Map<string, DigestTimes>> {
  const result = new Map<string, DigestTimes>();
  if (userIds.length === 0) return result;
  const [{ timezone }, rows] = await Promise.all([
    getSettings(db, institutionId),
    db
      .select()
      .from(notificationDigestSettings)
      .where(and(inTenant({ institutionId }, notificationDigestSettings), sql`${notificationDigestSettings.userId} = ${anyOf(userIds)}`)),
  ]);
  const stored = new Map(rows.map((r) => [r.userId, r]));
  for (const id of userIds) {
    const row = stored.get(id);
    result.set(id, {
      dailyTime: row?.dailyTime ?? DEFAULT_DAILY_TIME,
      weeklyDay: row?.weeklyDay ?? DEFAULT_WEEKLY_DAY,
      weeklyTime: row?.weeklyTime ?? DEFAULT_WEEKLY_TIME,
      timezone: row?.timezoneOverride ?? timezone,
    });
  }
  return result;
}

/** The singleton key of one digest occurrence: one job per person, kind and due time. */
export const digestJobKey = (institutionId: string, recipientId: string, kind: DigestKind, dueAt: Date) =>
  `notifications.digest:${institutionId}:${recipientId}:${kind}:${dueAt.toISOString()}`;

interface PlannedRow {
  id: string;
  recipient: string;
  channel: Channel;
  status: DeliveryStatus;
  reason: string | null;
  frequency: Frequency;
  digestDueAt: string | null;
  batchId: string | null;
}

/**
 * The one way to send a notification. Call it inside the transaction of the change that causes
 * it (pass the transaction's context): the delivery rows and their worker jobs commit or roll
 * back with the change. For each recipient it resolves the preference of the key (stored row
 * over the definition's defaults) and writes one row per channel: PENDING (to deliver), PENDING
 * with a digest due time (held for a digest e-mail), SKIPPED (channel off, frequency OFF, no
 * push device) or FAILED `missing_template` (no template for the channel: never delivered).
 * Set-based: a fixed number of statements per chunk of recipients, whatever their number.
 */
export async function notify(scope: NotifyScope, input: NotifyInput): Promise<NotifySummary> {
  const definition = definitionOf(input.key);
  if (!definition) throw new UnknownNotificationKeyError(`unknown notification key ${input.key}: add it to notifications.definitions.ts`);
  const recipients = [...new Set(input.recipients.filter((r) => typeof r === 'string' && r.length > 0))];
  if (recipients.length === 0) return { recipients: 0, rows: 0, newRecipients: 0, batches: 0 };
  if (!scope.inTx) return withTx(scope, (tx) => notify(tx, input));
  const { db, clock } = scope;
  const now = clock.now();
  const { institutionId } = input;
  const tenant = { institutionId };
  const metadata = input.metadata ?? {};
  const actionUrl = absoluteActionUrl(input.actionUrl, scope.config.publicBaseUrl);
  const storedActionUrl = input.actionUrl ?? null;

  // Render each channel once: templates see the metadata, never a recipient's identity.
  const templates = await templatesFor(db, institutionId, input.key);
  const view = { ...metadata, actionUrl };
  const rendered = CHANNELS.map((channel) => {
    const t = templates.get(channel);
    if (!t) return null;
    return { title: renderText(t.subject, view), message: renderText(t.body, view), html: channel === 'email' && t.htmlBody ? renderHtml(t.htmlBody, view) : null };
  });

  let rows = 0;
  let newRecipients = 0;
  let batches = 0;
  for (let start = 0; start < recipients.length; start += INSERT_CHUNK) {
    const chunk = recipients.slice(start, start + INSERT_CHUNK);
    const [prefs, withDevice] = await Promise.all([
      db
        .select()
        .from(notificationPreferences)
        .where(
          and(inTenant(tenant, notificationPreferences), eq(notificationPreferences.key, preferenceKeyOf(definition)), sql`${notificationPreferences.userId} = ${anyOf(chunk)}`),
        ),
      db
        .selectDistinct({ userId: notificationDevices.userId })
        .from(notificationDevices)
        .where(and(inTenant(tenant, notificationDevices), sql`${notificationDevices.userId} = ${anyOf(chunk)}`)),
    ]);
    const stored = new Map(prefs.map((p) => [p.userId, p]));
    const hasDevice = new Set(withDevice.map((d) => d.userId));
    const effective = new Map(chunk.map((id) => [id, effectivePreference(definition, stored.get(id))]));

    const digestUsers = input.forceImmediate ? [] : chunk.filter((id) => digestKindOf(effective.get(id)!.frequency) && effective.get(id)!.email && rendered[1]);
    const digestTimes = await digestTimesOf(db, institutionId, digestUsers);
    const digestJobs: { recipient: string; kind: DigestKind; dueAt: Date }[] = [];

    const planned: PlannedRow[] = [];
    const batchIds: string[] = [];
    chunk.forEach((recipient, i) => {
      if (i % DELIVERY_BATCH_SIZE === 0) batchIds.push(newId());
      const batchId = batchIds[batchIds.length - 1]!;
      const pref = effective.get(recipient)!;
      const kind = input.forceImmediate ? null : digestKindOf(pref.frequency);
      CHANNELS.forEach((channel, ci) => {
        const row: PlannedRow = { id: newId(), recipient, channel, status: 'PENDING', reason: null, frequency: pref.frequency, digestDueAt: null, batchId: null };
        const enabled = channel === 'IN_APP' ? pref.inApp : channel === 'email' ? pref.email : pref.push;
        if (!rendered[ci]) Object.assign(row, { status: 'FAILED', reason: 'missing_template' });
        else if (pref.frequency === 'OFF') Object.assign(row, { status: 'SKIPPED', reason: 'frequency_off' });
        else if (!enabled) Object.assign(row, { status: 'SKIPPED', reason: 'channel_disabled' });
        else if (channel === 'push' && !hasDevice.has(recipient)) Object.assign(row, { status: 'SKIPPED', reason: 'no_push_device' });
        else if (channel === 'push' && kind) Object.assign(row, { status: 'SKIPPED', reason: 'digest_frequency' });
        else if (channel === 'email' && kind) {
          const dueAt = nextDigestAt(now, digestTimes.get(recipient)!, kind);
          row.digestDueAt = dueAt.toISOString();
          digestJobs.push({ recipient, kind, dueAt });
        } else row.batchId = batchId;
        planned.push(row);
      });
    });

    const inserted = await insertRows(
      db,
      {
        institutionId,
        definition,
        rendered,
        actionUrl: storedActionUrl,
        metadata,
        dedupeKey: input.dedupeKey ?? null,
        attachments: input.attachments?.length ? input.attachments : null,
        now,
      },
      planned,
    );
    rows += inserted.length;
    newRecipients += new Set(inserted.map((r) => r.recipient_id)).size;
    const liveBatches = [...new Set(inserted.filter((r) => r.batch_id).map((r) => r.batch_id as string))];
    batches += await enqueueMany(
      db,
      clock,
      'notifications.deliver',
      liveBatches.map((batchId) => ({ payload: { institutionId, batchId }, opts: { institutionId } })),
    );
    const insertedIds = new Set(inserted.map((r) => r.id));
    const heldFor = new Set(planned.filter((r) => r.digestDueAt && insertedIds.has(r.id)).map((r) => r.recipient));
    await enqueueMany(
      db,
      clock,
      'notifications.sendDigest',
      digestJobs
        .filter((j) => heldFor.has(j.recipient))
        .map((j) => ({
          payload: { institutionId, recipientId: j.recipient, kind: j.kind },
          opts: { institutionId, runAt: j.dueAt, singletonKey: digestJobKey(institutionId, j.recipient, j.kind, j.dueAt) },
        })),
    );
  }
  return { recipients: recipients.length, rows, newRecipients, batches };
}

interface Constants {
  institutionId: string;
  definition: NotificationDefinition;
  rendered: ({ title: string; message: string; html: string | null } | null)[];
  actionUrl: string | null;
  metadata: Record<string, unknown>;
  dedupeKey: string | null;
  attachments: NotificationAttachment[] | null;
  now: Date;
}

/** One INSERT … SELECT FROM unnest(…) for a chunk: arrays per column, constants once. */
async function insertRows(db: DbOrTx, c: Constants, planned: PlannedRow[]) {
  const col = <T>(pick: (r: PlannedRow) => T) => sql.param(planned.map(pick));
  const titles = sql.param(c.rendered.map((r) => r?.title ?? ''));
  const messages = sql.param(c.rendered.map((r) => r?.message ?? ''));
  const htmls = sql.param(c.rendered.map((r) => r?.html ?? null));
  const now = c.now.toISOString();
  return rawRows<{ id: string; recipient_id: string; batch_id: string | null }>(
    db,
    sql`
    insert into notifications (institution_id, id, recipient_id, key, category, channel, status, failure_reason,
      title, message, html, action_url, metadata, frequency, digest_due_at, batch_id, dedupe_key, attachments, created_at, updated_at)
    select ${c.institutionId}, u.id, u.recipient, ${c.definition.key}, ${c.definition.category}, u.channel, u.status, u.reason,
      (${titles}::text[])[u.ci], (${messages}::text[])[u.ci], (${htmls}::text[])[u.ci], ${c.actionUrl}, ${JSON.stringify(c.metadata)}::jsonb,
      u.frequency, u.due, u.batch, ${c.dedupeKey}, case when u.channel = 'email' then ${c.attachments ? JSON.stringify(c.attachments) : null}::jsonb end,
      ${now}::timestamptz, ${now}::timestamptz
    from unnest(${col((r) => r.id)}::text[], ${col((r) => r.recipient)}::text[], ${col((r) => r.channel)}::text[],
      ${col((r) => r.status)}::text[], ${col((r) => r.reason)}::text[], ${col((r) => CHANNELS.indexOf(r.channel) + 1)}::int[],
      ${col((r) => r.frequency)}::text[], ${col((r) => r.digestDueAt)}::timestamptz[], ${col((r) => r.batchId)}::text[])
      as u(id, recipient, channel, status, reason, ci, frequency, due, batch)
    on conflict (institution_id, recipient_id, key, channel, dedupe_key) where dedupe_key is not null do nothing
    returning id, recipient_id, batch_id`,
  );
}
