import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { CHANNELS, FREQUENCIES } from './notifications.definitions.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const DELIVERY_STATUSES = ['PENDING', 'SENT', 'SKIPPED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Delivery rows (spec 2.8): one per recipient and channel of a notification. The IN_APP rows are
 * the in-app notifications users list and mark read. `notify()` writes them PENDING or SKIPPED
 * (or FAILED `missing_template`) in the transaction of the change that caused them; the worker
 * marks them SENT or FAILED. Rows of one `notify()` call share `batch_id` in chunks, and the
 * worker's `notifications.deliver` job works one batch.
 */
/** A stored object an e-mail carries as an attachment. */
export interface NotificationAttachment {
  /** Storage key of the object. */
  key: string;
  fileName: string;
  contentType: string;
}

export const notifications = pgTable(
  'notifications',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    /** The recipient's person id (CRM Contact id for contacts, user id for staff). */
    recipientId: text('recipient_id').notNull(),
    key: text('key').notNull(),
    category: text('category').notNull(),
    channel: text('channel', { enum: CHANNELS }).notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull(),
    failureReason: text('failure_reason'),
    /** Rendered from the channel's template when the notification was created. */
    title: text('title').notNull(),
    message: text('message').notNull(),
    /** E-mail rows: the rendered HTML body (template values HTML-escaped). */
    html: text('html'),
    actionUrl: text('action_url'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    frequency: text('frequency', { enum: FREQUENCIES }).notNull(),
    /** A row held for a digest: when its digest is due (the recipient's digest time). */
    digestDueAt: ts('digest_due_at'),
    /** The worker job's batch: a deliver job's batch id, or `digest:<job id>` once a digest job claimed a held row. */
    batchId: text('batch_id'),
    /** E-mail rows: stored files sent as attachments (a scheduled report's export). */
    attachments: jsonb('attachments').$type<NotificationAttachment[]>(),
    /** Makes a notification idempotent per recipient, key and channel (the reminder cron). */
    dedupeKey: text('dedupe_key'),
    attempts: integer('attempts').notNull().default(0),
    isRead: boolean('is_read').notNull().default(false),
    readAt: ts('read_at'),
    sentAt: ts('sent_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('notifications_inst_id_uq').on(t.institutionId, t.id),
    // GET /api/notifications: the recipient's in-app rows, newest first.
    index('notifications_inbox_idx')
      .on(t.institutionId, t.recipientId, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst())
      .where(sql`channel = 'IN_APP'`),
    // GET /api/notifications/unread-count: one index-only count.
    index('notifications_unread_idx')
      .on(t.institutionId, t.recipientId)
      .where(sql`channel = 'IN_APP' and is_read = false and status in ('PENDING', 'SENT')`),
    index('notifications_batch_idx')
      .on(t.batchId)
      .where(sql`batch_id is not null and status = 'PENDING'`),
    index('notifications_digest_idx')
      .on(t.institutionId, t.recipientId, t.digestDueAt)
      .where(sql`digest_due_at is not null and status = 'PENDING'`),
    uniqueIndex('notifications_dedupe_uq')
      .on(t.institutionId, t.recipientId, t.key, t.channel, t.dedupeKey)
      .where(sql`dedupe_key is not null`),
  ],
);

export type NotificationRow = typeof notifications.$inferSelect;

/**
 * Templates per key and channel (mustache; logic-less). `institution_id` null: the system
 * default, seeded by migration; a row of an institution overrides it for that institution.
 * `subject` is the title (the e-mail subject), `body` the text, `html_body` the e-mail HTML.
 */
export const notificationTemplates = pgTable(
  'notification_templates',
  {
    institutionId: text('institution_id'),
    id: text('id').primaryKey(),
    key: text('key').notNull(),
    channel: text('channel', { enum: CHANNELS }).notNull(),
    subject: text('subject').notNull(),
    body: text('body').notNull(),
    htmlBody: text('html_body'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    unique('notification_templates_inst_id_uq').on(t.institutionId, t.id),
    uniqueIndex('notification_templates_inst_key_uq')
      .on(t.institutionId, t.key, t.channel)
      .where(sql`institution_id is not null`),
    uniqueIndex('notification_templates_system_key_uq')
      .on(t.key, t.channel)
      .where(sql`institution_id is null`),
  ],
);

/**
 * A user's stored preference for one top-level key: only the fields the user set (null = the
 * definition's default), so a changed default reaches everyone who did not override it.
 */
export const notificationPreferences = pgTable(
  'notification_preferences',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    key: text('key').notNull(),
    emailEnabled: boolean('email_enabled'),
    pushEnabled: boolean('push_enabled'),
    inAppEnabled: boolean('in_app_enabled'),
    frequency: text('frequency', { enum: FREQUENCIES }),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('notification_preferences_inst_id_uq').on(t.institutionId, t.id), unique('notification_preferences_user_key_uq').on(t.institutionId, t.userId, t.key)],
);

export const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A user's digest times (spec 2.9); absent fields use the defaults and the institution's time zone. */
export const notificationDigestSettings = pgTable(
  'notification_digest_settings',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    dailyTime: text('daily_time'),
    weeklyDay: text('weekly_day', { enum: WEEKDAYS }),
    weeklyTime: text('weekly_time'),
    timezoneOverride: text('timezone_override'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [unique('notification_digest_settings_inst_id_uq').on(t.institutionId, t.id), unique('notification_digest_settings_user_uq').on(t.institutionId, t.userId)],
);

export const PUSH_PLATFORMS = ['web', 'ios', 'android'] as const;
export type PushPlatformName = (typeof PUSH_PLATFORMS)[number];

/**
 * Push token holders (spec 2.10). `device_id` = sha256 of `userId:token`, so a browser that
 * registers again reuses its row; a token lives on one row only, platform-wide (registering it
 * clears the row of any other user, in any institution; a unique index on `token` holds it).
 */
export const notificationDevices = pgTable(
  'notification_devices',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    userId: text('user_id').notNull(),
    deviceId: text('device_id').notNull(),
    token: text('token').notNull(),
    platform: text('platform', { enum: PUSH_PLATFORMS }).notNull(),
    /** `webpush` for browsers; `fcm` or `apns` for mobile. */
    provider: text('provider').notNull(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('notification_devices_inst_id_uq').on(t.institutionId, t.id),
    unique('notification_devices_device_uq').on(t.institutionId, t.deviceId),
    index('notification_devices_user_idx').on(t.institutionId, t.userId),
    // Spec 4.7: a push token belongs to one device row on the whole platform (a phone or browser
    // notifies only the user who registered it last, whichever institution they belong to).
    uniqueIndex('notification_devices_token_uq').on(t.token),
  ],
);

export type DeviceRow = typeof notificationDevices.$inferSelect;
