import { jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const institutions = pgTable('institutions', {
  id: text('id').primaryKey(),
  /** Tenant label of the CRM address; looked up through the CRM when absent. */
  slug: text('slug').unique(),
  name: text('name'),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export type Institution = typeof institutions.$inferSelect;
