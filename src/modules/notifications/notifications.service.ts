import { createHash } from 'node:crypto';
import { and, count, desc, eq, inArray, isNotNull, ne, or, sql, type SQL } from 'drizzle-orm';
import type { ServiceContext } from '../../platform/context.js';
import { withTx } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { inTenant } from '../../platform/db/tenancy.js';
import { forbidden, notFound, validationError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { pageMeta } from '../../platform/http/pagination.js';
import { enqueueMany } from '../../platform/queue/queue.js';
import { CATEGORIES, definitionOf, definitionsFor, preferenceKeyOf, type NotificationDefinition } from './notifications.definitions.js';
import { canonicalTimeZone } from '../../platform/time-zone.js';
import { digestKindOf, nextDigestAt } from './notifications.digest-times.js';
import { notificationDevices, notificationDigestSettings, notificationPreferences, notifications, type NotificationRow } from './notifications.tables.js';
import {
  MOBILE_PROVIDERS,
  NOTIFICATIONS_PAGE_DEFAULT,
  type DeviceTokenBody,
  type DigestTimesPatch,
  type MarkRead,
  type MobileProvider,
  type UpdatePreference,
} from './notifications.schemas.js';
import { digestJobKey, digestTimesOf, effectivePreference } from './notify.js';

const me = (ctx: ServiceContext) => ctx.actor.personId;

/**
 * The caller's in-app rows: the only rows any notification endpoint reads or changes. The
 * constant predicates are SQL literals, not parameters, so the planner matches them to the
 * partial indexes (`notifications_inbox_idx`, `notifications_unread_idx`) in any plan.
 */
const myInbox = (ctx: ServiceContext): SQL => and(inTenant(ctx, notifications), eq(notifications.recipientId, me(ctx)), sql`${notifications.channel} = 'IN_APP'`) as SQL;
const listed = sql`${notifications.status} in ('PENDING', 'SENT')`;
const unread = sql`${notifications.isRead} = false and ${notifications.status} in ('PENDING', 'SENT')`;

const toNotification = (r: NotificationRow) => ({
  id: r.id,
  title: r.title,
  message: r.message,
  type: r.key,
  key: r.key,
  category: r.category,
  actionUrl: r.actionUrl,
  isRead: r.isRead,
  readAt: r.readAt ? iso(r.readAt) : null,
  createdAt: iso(r.createdAt),
  metadata: r.metadata,
});

/** GET /api/notifications (spec 4.7): IN_APP rows with status SENT or PENDING, newest first. */
export async function listNotifications(ctx: ServiceContext, q: { page: number; limit?: number; perPage?: number; unreadOnly: boolean; category?: string }) {
  const perPage = q.limit ?? q.perPage ?? NOTIFICATIONS_PAGE_DEFAULT;
  const where = and(myInbox(ctx), q.unreadOnly ? unread : listed, q.category ? eq(notifications.category, q.category) : undefined);
  const [rows, [{ total }], unreadCount] = await Promise.all([
    ctx.db
      .select()
      .from(notifications)
      .where(where)
      .orderBy(desc(notifications.createdAt), desc(notifications.id))
      .limit(perPage)
      .offset((q.page - 1) * perPage),
    ctx.db.select({ total: count() }).from(notifications).where(where),
    countUnread(ctx),
  ]);
  return { data: { notifications: rows.map(toNotification), total: Number(total), unreadCount }, meta: pageMeta({ page: q.page, perPage }, Number(total)) };
}

/**
 * The unread count as a prepared statement, one per database handle: the web header polls it
 * every 30 s per open tab, so it skips query building, and PostgreSQL parses and plans it once
 * per connection. One count over the partial index `notifications_unread_idx`.
 */
const prepareUnreadCount = (db: ServiceContext['db']) =>
  db
    .select({ n: count() })
    .from(notifications)
    .where(
      and(
        inTenant({ institutionId: sql.placeholder('institutionId') }, notifications),
        eq(notifications.recipientId, sql.placeholder('recipientId')),
        sql`${notifications.channel} = 'IN_APP'`,
        unread,
      ),
    )
    .prepare('notifications_unread_count');
const preparedUnreadCounts = new WeakMap<object, ReturnType<typeof prepareUnreadCount>>();

export async function countUnread(ctx: ServiceContext): Promise<number> {
  let prepared = preparedUnreadCounts.get(ctx.db);
  if (!prepared) {
    prepared = prepareUnreadCount(ctx.db);
    preparedUnreadCounts.set(ctx.db, prepared);
  }
  const [row] = await prepared.execute({ institutionId: ctx.institutionId, recipientId: me(ctx) });
  return Number(row?.n ?? 0);
}

/**
 * PATCH /api/notifications/read: `{ids}` or `{all: true}` (with `ids`, `all` is false or absent:
 * the ids are what changes); only the caller's own unread rows change.
 */
export async function markRead(ctx: ServiceContext, target: MarkRead) {
  const ids = target.ids;
  if (ids ? ids.length === 0 : target.all !== true) return { updated: 0 };
  const now = ctx.clock.now();
  const changed = await ctx.db
    .update(notifications)
    .set({ isRead: true, readAt: now, updatedAt: now })
    .where(and(myInbox(ctx), unread, ids ? inArray(notifications.id, [...new Set(ids)]) : undefined))
    .returning({ id: notifications.id });
  return { updated: changed.length };
}

/**
 * The legacy PATCH /api/notifications forms, kept for older clients. `{notificationId}` names one
 * record: 404 when the caller has no such (listed) notification, as for any owner-scoped record
 * of someone else; their own already-read one is `{updated: 0}`.
 */
export async function markReadLegacy(ctx: ServiceContext, body: { markAllRead: true } | { notificationId: string }) {
  if ('markAllRead' in body) return markRead(ctx, { all: true });
  const result = await markRead(ctx, { ids: [body.notificationId] });
  if (result.updated === 0) {
    const [own] = await ctx.db
      .select({ id: notifications.id })
      .from(notifications)
      .where(and(myInbox(ctx), listed, eq(notifications.id, body.notificationId)));
    if (!own) throw notFound('Notification');
  }
  return result;
}

// ── preferences ─────────────────────────────────────────────────────────────

const toDefinition = (d: NotificationDefinition) => ({ ...d, defaultChannels: [...d.defaultChannels], availableTo: [...d.availableTo] });

async function storedPreferences(ctx: ServiceContext) {
  const rows = await ctx.db
    .select()
    .from(notificationPreferences)
    .where(and(inTenant(ctx, notificationPreferences), eq(notificationPreferences.userId, me(ctx))));
  return new Map(rows.map((r) => [r.key, r]));
}

const rowOf = (d: NotificationDefinition, stored: Map<string, typeof notificationPreferences.$inferSelect>) => {
  const e = effectivePreference(d, stored.get(preferenceKeyOf(d)));
  return { emailEnabled: e.email, pushEnabled: e.push, inAppEnabled: e.inApp, frequency: e.frequency };
};

async function digestTimesView(ctx: ServiceContext) {
  const [times, [stored]] = await Promise.all([
    digestTimesOf(ctx.db, ctx.institutionId, [me(ctx)]),
    ctx.db
      .select({ timezoneOverride: notificationDigestSettings.timezoneOverride })
      .from(notificationDigestSettings)
      .where(and(inTenant(ctx, notificationDigestSettings), eq(notificationDigestSettings.userId, me(ctx)))),
  ]);
  // Canonical on the way out as well, for a zone stored before names were canonicalised on write.
  const zone = (z: string | null) => (z === null ? null : canonicalTimeZone(z));
  const own = times.get(me(ctx))!;
  return { ...own, timezone: zone(own.timezone)!, timezoneOverride: zone(stored?.timezoneOverride ?? null) };
}

/** GET /api/notifications/preferences: every key the role may see, grouped by category, with the caller's rows. */
export async function getPreferences(ctx: ServiceContext) {
  const visible = definitionsFor(ctx.actor.role);
  const [stored, digestTimes, [device]] = await Promise.all([
    storedPreferences(ctx),
    digestTimesView(ctx),
    ctx.db
      .select({ id: notificationDevices.id })
      .from(notificationDevices)
      .where(and(inTenant(ctx, notificationDevices), eq(notificationDevices.userId, me(ctx))))
      .limit(1),
  ]);
  const categories = CATEGORIES.map((category) => ({ category, definitions: visible.filter((d) => d.category === category).map(toDefinition) })).filter(
    (c) => c.definitions.length > 0,
  );
  return {
    role: ctx.actor.role,
    categories,
    preferences: Object.fromEntries(visible.map((d) => [d.key, rowOf(d, stored)])),
    digestTimes,
    hasPushToken: !!device,
  };
}

/**
 * PATCH /api/notifications/preferences, with the four rules of spec 4.7: a child key is 400; a
 * key of another role is 403; turning off any channel (or frequency OFF) of an undisableable
 * key is 403; a key whose frequency cannot change accepts only IMMEDIATE (400).
 * Only the fields sent change.
 */
export async function updatePreference(ctx: ServiceContext, body: UpdatePreference) {
  const d = definitionOf(body.key);
  if (!d) throw validationError(`Unknown notification key ${body.key}`, [{ field: 'body.key', message: 'not a notification key' }]);
  if (d.parentKey) {
    throw validationError(`${body.key} is a child key of ${d.parentKey}: set ${d.parentKey} instead`, [{ field: 'body.key', message: 'only top-level keys can be set' }]);
  }
  if (!d.availableTo.includes(ctx.actor.role)) throw forbidden(`${body.key} is not a notification of the ${ctx.actor.role} role`);
  const disables = body.emailEnabled === false || body.pushEnabled === false || body.inAppEnabled === false || body.frequency === 'OFF';
  if (!d.canDisable && disables) throw forbidden(`${body.key} cannot be turned off`);
  if (!d.canChangeFrequency && body.frequency !== undefined && body.frequency !== 'IMMEDIATE') {
    throw validationError(`${body.key} is always sent immediately`, [{ field: 'body.frequency', message: 'only IMMEDIATE is accepted for this key' }]);
  }
  const changes = {
    ...(body.emailEnabled !== undefined && { emailEnabled: body.emailEnabled }),
    ...(body.pushEnabled !== undefined && { pushEnabled: body.pushEnabled }),
    ...(body.inAppEnabled !== undefined && { inAppEnabled: body.inAppEnabled }),
    ...(body.frequency !== undefined && { frequency: body.frequency }),
  };
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(notificationPreferences)
    .values({ institutionId: ctx.institutionId, id: newId(), userId: me(ctx), key: d.key, ...changes, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [notificationPreferences.institutionId, notificationPreferences.userId, notificationPreferences.key], set: { ...changes, updatedAt: now } })
    .returning();
  return { key: d.key, ...rowOf(d, new Map([[d.key, row!]])) };
}

/** DELETE /api/notifications/preferences `{confirm: true}`: every stored row of the caller goes; defaults apply again. */
export async function resetPreferences(ctx: ServiceContext) {
  await ctx.db.delete(notificationPreferences).where(and(inTenant(ctx, notificationPreferences), eq(notificationPreferences.userId, me(ctx))));
  return { reset: true as const };
}

/**
 * PATCH /api/notifications/preferences/digest-times. Held digest rows move to the new time, so
 * a changed `dailyTime` takes effect for what is already waiting.
 */
export async function updateDigestTimes(ctx: ServiceContext, body: DigestTimesPatch) {
  const changes = {
    ...(body.dailyTime !== undefined && { dailyTime: body.dailyTime }),
    ...(body.weeklyDay !== undefined && { weeklyDay: body.weeklyDay }),
    ...(body.weeklyTime !== undefined && { weeklyTime: body.weeklyTime }),
    ...(body.timezoneOverride !== undefined && { timezoneOverride: body.timezoneOverride === null ? null : canonicalTimeZone(body.timezoneOverride) }),
  };
  return withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    if (Object.keys(changes).length > 0) {
      await tx.db
        .insert(notificationDigestSettings)
        .values({ institutionId: tx.institutionId, id: newId(), userId: me(tx), ...changes, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: [notificationDigestSettings.institutionId, notificationDigestSettings.userId], set: { ...changes, updatedAt: now } });
      await rescheduleHeldDigests(tx);
    }
    return digestTimesView(tx);
  });
}

async function rescheduleHeldDigests(ctx: ServiceContext) {
  const times = (await digestTimesOf(ctx.db, ctx.institutionId, [me(ctx)])).get(me(ctx))!;
  const now = ctx.clock.now();
  const jobs = [];
  for (const frequency of ['DAILY_DIGEST', 'WEEKLY_DIGEST'] as const) {
    const kind = digestKindOf(frequency)!;
    const dueAt = nextDigestAt(now, times, kind);
    const moved = await ctx.db
      .update(notifications)
      .set({ digestDueAt: dueAt, updatedAt: now })
      .where(
        and(
          inTenant(ctx, notifications),
          eq(notifications.recipientId, me(ctx)),
          eq(notifications.status, 'PENDING'),
          eq(notifications.frequency, frequency),
          isNotNull(notifications.digestDueAt),
        ),
      )
      .returning({ id: notifications.id });
    if (moved.length > 0) {
      jobs.push({
        payload: { institutionId: ctx.institutionId, recipientId: me(ctx), kind },
        opts: { institutionId: ctx.institutionId, runAt: dueAt, singletonKey: digestJobKey(ctx.institutionId, me(ctx), kind, dueAt) },
      });
    }
  }
  await enqueueMany(ctx.db, ctx.clock, 'notifications.sendDigest', jobs);
}

// ── devices ─────────────────────────────────────────────────────────────────

/** Spec 2.10: the device id is the sha256 of `userId:token`. */
export const deviceIdOf = (userId: string, token: string) => createHash('sha256').update(`${userId}:${token}`).digest('hex');

const PROVIDER_OF_PLATFORM = { web: 'webpush', ios: 'apns', android: 'fcm' } as const;

/**
 * Register a push token for the caller: one row per (caller, token). The same token on any other
 * row is cleared, in every institution (spec 4.7: a phone or browser notifies only its current
 * user; the unique index on `token` holds it platform-wide). Registrations of one token take a
 * transaction lock on it, so two at once apply one after the other instead of colliding.
 */
async function registerDevice(ctx: ServiceContext, input: { token: string; platform: 'web' | 'ios' | 'android'; provider: string; metadata: Record<string, unknown> }) {
  const deviceId = deviceIdOf(me(ctx), input.token);
  return withTx(ctx, async (tx) => {
    const now = tx.clock.now();
    await tx.db.execute(sql`select pg_advisory_xact_lock(hashtext(${`push-token:${input.token}`}))`);
    // Deliberately not scoped to the tenant: the token names a device, whoever held it before.
    await tx.db
      .delete(notificationDevices)
      .where(and(eq(notificationDevices.token, input.token), or(ne(notificationDevices.institutionId, tx.institutionId), ne(notificationDevices.deviceId, deviceId))));
    const [row] = await tx.db
      .insert(notificationDevices)
      .values({
        institutionId: tx.institutionId,
        id: newId(),
        userId: me(tx),
        deviceId,
        token: input.token,
        platform: input.platform,
        provider: input.provider,
        metadata: input.metadata,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [notificationDevices.institutionId, notificationDevices.deviceId],
        // A registration without metadata (POST /api/notifications/push-token, or a device call
        // sending none) keeps what an earlier call stored; new metadata replaces it.
        set: { platform: input.platform, provider: input.provider, ...(Object.keys(input.metadata).length > 0 && { metadata: input.metadata }), updatedAt: now },
      })
      .returning();
    return row!;
  });
}

/** POST /api/notifications/push-token: a web PushSubscription (JSON text) or a mobile token. */
export async function registerPushToken(ctx: ServiceContext, body: { token: string; platform: 'web' | 'ios' | 'android' }) {
  const row = await registerDevice(ctx, { ...body, provider: PROVIDER_OF_PLATFORM[body.platform], metadata: {} });
  return { id: row.id, registered: true as const };
}

/**
 * POST /api/v1/devices/<provider>-token for a provider other than fcm and apns (`expo`, `gcm`,
 * …): delivery has no sender for it, so the token is refused with the providers that work,
 * rather than stored for a device that would never be reached.
 */
export function refuseMobileProvider(provider: string): never {
  const supported = MOBILE_PROVIDERS.join(', ');
  throw validationError(`Push provider '${provider}' is not supported; register the device with one of: ${supported} (POST /api/v1/devices/<provider>-token)`, [
    { field: 'params.provider', message: `must be one of ${supported}` },
  ]);
}

/** POST /api/v1/devices/{fcm|apns}-token: a mobile app's token with its device metadata. */
export async function registerMobileDevice(ctx: ServiceContext, provider: MobileProvider, body: DeviceTokenBody) {
  if (provider === 'apns' && body.platform !== 'ios') {
    throw validationError('APNs tokens belong to iOS devices', [{ field: 'body.platform', message: 'must be ios for apns' }]);
  }
  const { token, platform, ...metadata } = body;
  const row = await registerDevice(ctx, { token, platform, provider, metadata });
  return { id: row.id, registered: true as const, deviceId: row.deviceId, provider, platform };
}
