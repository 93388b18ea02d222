import { and, eq, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/** Anything that knows its tenant: a service context, or a bare institution id holder. */
export interface TenantScope {
  institutionId: string;
}

/** A tenant table: every one has `institution_id` and `id`. */
export interface TenantTable {
  institutionId: AnyPgColumn;
  id: AnyPgColumn;
}

/**
 * The institution predicate of a tenant table for the caller's tenant. Every query on a tenant
 * table starts from this (or `byId`), so no query can forget the institution.
 */
export const inTenant = (scope: TenantScope | PreparedTenantScope, table: { institutionId: AnyPgColumn }): SQL => eq(table.institutionId, scope.institutionId);

/** The tenant of a prepared statement: the institution id is bound when it executes. */
export interface PreparedTenantScope {
  institutionId: Placeholder;
}

/**
 * The institution predicate for SQL written as text, on a table alias (`s` of
 * `from live_sessions s`) or an unaliased table name: `"s".institution_id = $n`.
 */
export const inTenantAs = (scope: TenantScope, alias: string): SQL => sql`${sql.identifier(alias)}.institution_id = ${scope.institutionId}`;

/** One row of a tenant table by id, in the caller's tenant. */
export const byId = (scope: TenantScope, table: TenantTable, id: string): SQL => and(inTenant(scope, table), eq(table.id, id)) as SQL;

/**
 * A worker job's target row: by id within the job's institution. By id alone only when the
 * job names no institution (a job queued before its payload carried one).
 */
export const byIdForJob = (institutionId: string | null | undefined, table: TenantTable, id: string): SQL =>
  institutionId ? byId({ institutionId }, table, id) : eq(table.id, id);

/** Join condition between a child's `(institution_id, <fk>)` and its parent's `(institution_id, id)`. */
export const sameTenantRef = (fk: AnyPgColumn, childInstitution: AnyPgColumn, parent: TenantTable): SQL =>
  and(eq(parent.id, fk), eq(parent.institutionId, childInstitution)) as SQL;
