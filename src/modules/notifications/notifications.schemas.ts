import { z } from 'zod';
import { envelopeWithMeta } from '../../platform/http/envelope.js';
import { pageNumber, pageSize } from '../../platform/http/pagination.js';
import { optionalFilter } from '../../platform/http/query-filters.js';
import { ROLES } from '../../platform/auth/tokens.js';
import { CATEGORIES, CHANNELS, FREQUENCIES } from './notifications.definitions.js';
import { isTimeZone } from '../../platform/time-zone.js';
import { HH_MM } from './notifications.digest-times.js';
import { PUSH_PLATFORMS, WEEKDAYS } from './notifications.tables.js';

/** Spec 8: notifications list default 25, at most 100. */
export const NOTIFICATIONS_PAGE_DEFAULT = 25;

/**
 * `true`/`false` (also 1/0) in a query string; `z.coerce.boolean` would read "false" as true.
 * Empty (`?unreadOnly=`, an "All" choice of a filter form) is false, as if absent.
 */
const queryBoolean = z
  .enum(['true', 'false', '1', '0', ''])
  .transform((v) => v === 'true' || v === '1')
  .default(false);

export const listNotificationsQuery = z.object({
  page: pageNumber.describe('1-indexed page number (default 1)'),
  limit: pageSize.describe(`page size, 1 to 100 (default ${NOTIFICATIONS_PAGE_DEFAULT}); here limit wins when both limit and perPage are sent`),
  perPage: pageSize.describe(`alias of limit (default ${NOTIFICATIONS_PAGE_DEFAULT}); limit wins when both are sent`),
  unreadOnly: queryBoolean.describe('only unread notifications; empty is false'),
  category: optionalFilter(z.string().max(64)).describe("a definition's category, e.g. ASSESSMENT; empty means every category"),
});

export const notificationSchema = z.object({
  id: z.string(),
  title: z.string(),
  message: z.string(),
  type: z.string().describe('the notification key (same as key)'),
  key: z.string(),
  category: z.string(),
  actionUrl: z.string().nullable(),
  isRead: z.boolean(),
  readAt: z.string().nullable(),
  createdAt: z.string(),
  metadata: z.record(z.string(), z.unknown()),
});

export const notificationListSchema = z.object({
  notifications: z.array(notificationSchema),
  total: z.number().int(),
  unreadCount: z.number().int(),
});
/** GET /api/notifications: the list, total and unread count, with page meta. */
export const notificationListEnvelope = envelopeWithMeta(notificationListSchema);

export const MARK_READ_MAX_IDS = 500;

const notificationIdField = z.string({ error: 'must be a notification id (a string)' }).min(1, 'must not be empty').max(200, 'at most 200 characters');

/**
 * `{ids}` or `{all: true}`. One object rather than a union of the two, so a bad value is named
 * with its field (a union only says that neither form matched). With `ids`, `all: false` says
 * nothing and is accepted; `ids` with `all: true` is contradictory and refused.
 */
export const markReadBody = z
  .strictObject({
    ids: z
      .array(notificationIdField, { error: 'must be a list of notification ids' })
      .max(MARK_READ_MAX_IDS, `at most ${MARK_READ_MAX_IDS} ids at once`)
      .optional()
      .describe(`at most ${MARK_READ_MAX_IDS}`),
    all: z.boolean({ error: 'must be true or false' }).optional().describe('true marks every notification; false only alongside ids'),
  })
  .refine((b) => b.ids !== undefined || b.all === true, { message: 'send {ids: [...]} or {all: true}' })
  .refine((b) => b.ids === undefined || b.all !== true, { message: 'send either ids or all: true, not both', path: ['all'] })
  .describe('{ids: [...]} or {all: true}');
export type MarkRead = z.infer<typeof markReadBody>;

export const legacyPatchBody = z
  .union([z.strictObject({ markAllRead: z.literal(true) }), z.strictObject({ notificationId: z.string().min(1).max(200) })])
  .describe('legacy forms: {markAllRead: true} or {notificationId}');

export const updatedSchema = z.object({ updated: z.number().int() });
export const countSchema = z.object({ count: z.number().int() });

export const definitionSchema = z.object({
  key: z.string(),
  label: z.string(),
  description: z.string(),
  category: z.enum(CATEGORIES),
  defaultChannels: z.array(z.enum(CHANNELS)),
  canDisable: z.boolean(),
  canChangeFrequency: z.boolean(),
  availableTo: z.array(z.enum(ROLES)),
  parentKey: z.string().nullable().describe('set on child keys, which follow their parent key and cannot be set'),
});

export const preferenceRowSchema = z.object({
  emailEnabled: z.boolean(),
  pushEnabled: z.boolean(),
  inAppEnabled: z.boolean(),
  frequency: z.enum(FREQUENCIES),
});

export const digestTimesSchema = z.object({
  dailyTime: z.string().describe('HH:MM'),
  weeklyDay: z.enum(WEEKDAYS),
  weeklyTime: z.string().describe('HH:MM'),
  timezone: z.string().describe("effective IANA zone: the user's override, else the institution's"),
  timezoneOverride: z.string().nullable(),
});

export const preferencesSchema = z.object({
  role: z.enum(ROLES),
  categories: z.array(z.object({ category: z.enum(CATEGORIES), definitions: z.array(definitionSchema) })),
  preferences: z.record(z.string(), preferenceRowSchema),
  digestTimes: digestTimesSchema,
  hasPushToken: z.boolean(),
});

export const updatePreferenceBody = z.strictObject({
  key: z.string().min(1).max(100),
  emailEnabled: z.boolean().optional(),
  pushEnabled: z.boolean().optional(),
  inAppEnabled: z.boolean().optional(),
  frequency: z.enum(FREQUENCIES).optional(),
});
export type UpdatePreference = z.infer<typeof updatePreferenceBody>;

export const preferenceSchema = preferenceRowSchema.extend({ key: z.string() });

export const resetPreferencesBody = z.strictObject({ confirm: z.literal(true, { error: 'confirm must be true' }) });
export const resetSchema = z.object({ reset: z.literal(true) });

const hhmm = z.string().regex(HH_MM, 'must be HH:MM (00:00 to 23:59)');
export const digestTimesBody = z.strictObject({
  dailyTime: hhmm.optional(),
  weeklyDay: z.enum(WEEKDAYS).optional(),
  weeklyTime: hhmm.optional(),
  timezoneOverride: z
    .string()
    .max(64)
    .refine(isTimeZone, 'must be an IANA time zone name, e.g. Europe/Berlin')
    .nullable()
    .optional()
    .describe('IANA zone, stored and answered in its canonical spelling (europe/berlin → Europe/Berlin); null removes the override'),
});
export type DigestTimesPatch = z.infer<typeof digestTimesBody>;

/** Push tokens: a browser's PushSubscription JSON, or an FCM/APNs token. At most 2,048 bytes (UTF-8): they are a unique index's key. */
const token = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .refine((v) => Buffer.byteLength(v, 'utf8') <= 2048, 'at most 2048 bytes');

export const pushTokenBody = z.strictObject({ token, platform: z.enum(PUSH_PLATFORMS) });

export const registeredSchema = z.object({ id: z.string(), registered: z.literal(true) });

export const MOBILE_PROVIDERS = ['fcm', 'apns'] as const;
export type MobileProvider = (typeof MOBILE_PROVIDERS)[number];

/** Device metadata beyond the named fields (spec 4.7 leaves the body open): bounded, flat, plain values. */
export const DEVICE_METADATA_MAX_KEYS = 20;
export const DEVICE_METADATA_VALUE_MAX = 200;
const DEVICE_METADATA_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const deviceFields = {
  token,
  platform: z.enum(['ios', 'android']),
  deviceName: z.string().max(200).optional(),
  model: z.string().max(200).optional(),
  osVersion: z.string().max(50).optional(),
  appVersion: z.string().max(50).optional(),
  locale: z.string().max(35).optional(),
};
const deviceMetadataValue = z.union([z.string().max(DEVICE_METADATA_VALUE_MAX), z.number(), z.boolean()], {
  error: `must be a string (at most ${DEVICE_METADATA_VALUE_MAX} characters), a number or a boolean`,
});

export const deviceTokenBody = z
  .object(deviceFields)
  .catchall(deviceMetadataValue)
  .superRefine((body, ctx) => {
    const extra = Object.keys(body).filter((k) => !(k in deviceFields));
    if (extra.length > DEVICE_METADATA_MAX_KEYS) {
      ctx.addIssue({ code: 'custom', path: [], message: `at most ${DEVICE_METADATA_MAX_KEYS} device metadata fields besides the named ones (${extra.length} sent)` });
    }
    for (const k of extra) {
      if (!DEVICE_METADATA_KEY.test(k)) {
        ctx.addIssue({ code: 'custom', path: [k], message: 'a metadata field name is 1 to 64 letters, digits, _, - or ., starting with a letter' });
      }
    }
  })
  .describe(
    `The token, the platform and optional device metadata: the named fields, and up to ${DEVICE_METADATA_MAX_KEYS} further fields ` +
      `(names of letters, digits, _, - or ., starting with a letter, at most 64; values a string of at most ${DEVICE_METADATA_VALUE_MAX} characters, a number or a boolean), all stored with the device.`,
  );
export type DeviceTokenBody = z.infer<typeof deviceTokenBody>;

export const deviceProviderParams = z.object({ provider: z.string().describe('a push provider other than fcm and apns') });

export const deviceSchema = z.object({
  id: z.string(),
  registered: z.literal(true),
  deviceId: z.string(),
  provider: z.enum(MOBILE_PROVIDERS),
  platform: z.enum(['ios', 'android']),
});
