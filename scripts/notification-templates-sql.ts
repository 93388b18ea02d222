/**
 * Prints the SQL that seeds the system default notification templates (institution_id null)
 * from src/modules/notifications/notifications.default-templates.ts: one row per key and
 * channel. Migration 0004_notifications holds its output; a changed default goes into a new
 * migration (`npm run gen:templates > /tmp/t.sql`, then upsert those rows there).
 * test/modules/notifications-templates.test.ts checks the database against the source.
 */
import { CHANNELS } from '../src/modules/notifications/notifications.definitions.js';
import { DEFAULT_TEMPLATES, emailHtmlOf } from '../src/modules/notifications/notifications.default-templates.js';

const literal = (s: string | null) => (s === null ? 'null' : `'${s.replace(/'/g, "''")}'`);

const rows: string[] = [];
for (const [key, t] of Object.entries(DEFAULT_TEMPLATES)) {
  for (const channel of CHANNELS) {
    const html = channel === 'email' ? emailHtmlOf(t.body) : null;
    rows.push(`  (null, ${literal(`tpl_${key}_${channel}`.toLowerCase())}, ${literal(key)}, ${literal(channel)}, ${literal(t.subject)}, ${literal(t.body)}, ${literal(html)})`);
  }
}
console.log(`INSERT INTO "notification_templates" ("institution_id", "id", "key", "channel", "subject", "body", "html_body") VALUES\n${rows.join(',\n')};`);
