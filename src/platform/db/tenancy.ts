import { and, eq, type SQL } from 'drizzle-orm';
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
export const inTenant = (scope: TenantScope, table: { institutionId: AnyPgColumn }): SQL => eq(table.institutionId, scope.institutionId);

/** One row of a tenant table by id, in the caller's tenant. */
export const byId = (scope: TenantScope, table: TenantTable, id: string): SQL => and(inTenant(scope, table), eq(table.id, id)) as SQL;

/** Join condition between a child's `(institution_id, <fk>)` and its parent's `(institution_id, id)`. */
export const sameTenantRef = (fk: AnyPgColumn, childInstitution: AnyPgColumn, parent: TenantTable): SQL =>
  and(eq(parent.id, fk), eq(parent.institutionId, childInstitution)) as SQL;
