import type { AppModule, ModuleRoutes } from '../types.js';
import { typed } from '../types.js';
import { envelope, ok } from '../../platform/http/envelope.js';
import { actorOf, requestContext } from '../../platform/auth/auth-plugin.js';
import {
  countSchema,
  deviceProviderParams,
  deviceSchema,
  deviceTokenBody,
  digestTimesBody,
  digestTimesSchema,
  legacyPatchBody,
  listNotificationsQuery,
  markReadBody,
  MOBILE_PROVIDERS,
  notificationListEnvelope,
  preferenceSchema,
  preferencesSchema,
  pushTokenBody,
  registeredSchema,
  resetPreferencesBody,
  resetSchema,
  updatedSchema,
  updatePreferenceBody,
} from './notifications.schemas.js';
import * as service from './notifications.service.js';
import { notificationsJobs } from './notifications.jobs.js';

const tags = ['notifications'];

/** Spec 4.7: the caller's in-app notifications, preferences, digest times and push devices. */
const routes: ModuleRoutes = async (app, deps) => {
  const r = typed(app);
  const ctxOf = (req: Parameters<typeof actorOf>[0]) => requestContext(deps, req);

  r.get(
    '/api/notifications',
    {
      schema: {
        tags,
        operationId: 'listNotifications',
        summary: "The caller's in-app notifications, newest first",
        description:
          'Only IN_APP rows with status SENT or PENDING. `total` counts the rows matching the filters; `unreadCount` all unread rows. ' +
          'Page size `limit` (default 25, max 100; `perPage` is an alias); `meta` as on every paginated endpoint. Any signed-in user, for themself. `unreadOnly` and `category` filter; 400 VALIDATION_ERROR for a bad filter or page value.',
        querystring: listNotificationsQuery,
        response: { 200: notificationListEnvelope },
      },
    },
    async (req) => {
      const { data, meta } = await service.listNotifications(ctxOf(req), req.query);
      return { data, error: null, meta };
    },
  );

  r.patch(
    '/api/notifications/read',
    {
      schema: {
        tags,
        operationId: 'markNotificationsRead',
        summary: 'Mark notifications read',
        description:
          "`{ids}` (at most 500) marks those of the caller's notifications; `{all: true}` marks every one. `all: false` beside `ids` is accepted and says nothing; " +
          "`ids` with `all: true` is 400, as is neither. Other people's ids change nothing. `updated` counts rows that were unread." +
          ' ' +
          'Any signed-in user, for themself. 400 VALIDATION_ERROR for more than 500 ids or a malformed body.',
        body: markReadBody,
        response: { 200: envelope(updatedSchema) },
      },
    },
    async (req) => ok(await service.markRead(ctxOf(req), req.body)),
  );

  r.patch(
    '/api/notifications',
    {
      schema: {
        tags,
        operationId: 'markNotificationsReadLegacy',
        summary: 'Mark notifications read (legacy forms)',
        description:
          'Kept for older clients: `{markAllRead: true}` or `{notificationId}`. Same effect and answer as PATCH /api/notifications/read, except that a ' +
          '`notificationId` the caller has no notification of (unknown, or someone else’s) is 404 NOT_FOUND; their own already-read one is `{updated: 0}`. Any signed-in user, for themself. 400 VALIDATION_ERROR for a body in neither form.',
        body: legacyPatchBody,
        response: { 200: envelope(updatedSchema) },
      },
    },
    async (req) => ok(await service.markReadLegacy(ctxOf(req), req.body)),
  );

  r.get(
    '/api/notifications/unread-count',
    {
      schema: {
        tags,
        operationId: 'countUnreadNotifications',
        summary: "The caller's unread in-app notifications (polled by the web header every 30 s)",
        description:
          'Any signed-in user, for themself. Unread IN_APP notifications with status SENT or PENDING, as counted by `unreadCount` of GET /api/notifications. No error beyond authentication (401 AUTH_REQUIRED) and rate limiting (429 RATE_LIMITED).',
        response: { 200: envelope(countSchema) },
      },
    },
    async (req) => ok({ count: await service.countUnread(ctxOf(req)) }),
  );

  r.get(
    '/api/notifications/preferences',
    {
      schema: {
        tags,
        operationId: 'getNotificationPreferences',
        summary: "The caller's notification preferences",
        description:
          'Every key visible to the role (from the session token), definitions grouped by category, a preference row per key ' +
          '(the stored row overlaid on the definition defaults; a child key follows its parent), digest times and whether a push device is registered. Any signed-in user, for themself. No error beyond authentication (401 AUTH_REQUIRED) and rate limiting (429 RATE_LIMITED).',
        response: { 200: envelope(preferencesSchema) },
      },
    },
    async (req) => ok(await service.getPreferences(ctxOf(req))),
  );

  r.patch(
    '/api/notifications/preferences',
    {
      schema: {
        tags,
        operationId: 'updateNotificationPreference',
        summary: 'Change the preference of one key',
        description:
          'Only the fields sent change. 400 for an unknown or child key, and for a frequency other than IMMEDIATE on a key whose frequency cannot change; ' +
          "403 FORBIDDEN for another role's key and for turning off a key that cannot be disabled (a channel false, or frequency OFF)." +
          ' ' +
          'Any signed-in user, for themself.',
        body: updatePreferenceBody,
        response: { 200: envelope(preferenceSchema) },
      },
    },
    async (req) => ok(await service.updatePreference(ctxOf(req), req.body)),
  );

  r.delete(
    '/api/notifications/preferences',
    {
      schema: {
        tags,
        operationId: 'resetNotificationPreferences',
        summary: "Delete all of the caller's preference rows (back to the defaults)",
        description: 'The body must be `{confirm: true}`. Any signed-in user, for themself. Anything else as the body (no confirm, confirm false) is 400 VALIDATION_ERROR.',
        body: resetPreferencesBody,
        response: { 200: envelope(resetSchema) },
      },
    },
    async (req) => ok(await service.resetPreferences(ctxOf(req))),
  );

  r.patch(
    '/api/notifications/preferences/digest-times',
    {
      schema: {
        tags,
        operationId: 'updateDigestTimes',
        summary: 'Change when digests are sent',
        description:
          '`dailyTime` and `weeklyTime` as HH:MM, `weeklyDay` SUNDAY to SATURDAY, `timezoneOverride` an IANA zone (null: the institution’s zone). ' +
          'Digests already waiting move to the new time. Any signed-in user, for themself. Only the fields sent change. 400 VALIDATION_ERROR for a time that is not HH:MM, an unknown weekday or time zone, or an unknown field.',
        body: digestTimesBody,
        response: { 200: envelope(digestTimesSchema) },
      },
    },
    async (req) => ok(await service.updateDigestTimes(ctxOf(req), req.body)),
  );

  r.post(
    '/api/notifications/push-token',
    {
      schema: {
        tags,
        operationId: 'registerPushToken',
        summary: 'Register a push token for the caller',
        description:
          'For `web` the token is the browser’s PushSubscription as JSON text (`{endpoint, keys: {p256dh, auth}}`). The device id is sha256(`userId:token`), ' +
          'so registering again reuses the row; the same token on any other row is cleared. Any signed-in user, for themself. 400 VALIDATION_ERROR for an unknown platform or a token over 2,048 bytes.',
        body: pushTokenBody,
        response: { 200: envelope(registeredSchema) },
      },
    },
    async (req) => ok(await service.registerPushToken(ctxOf(req), req.body)),
  );

  for (const provider of MOBILE_PROVIDERS) {
    r.post(
      `/api/devices/${provider}-token`,
      {
        schema: {
          tags,
          operationId: `registerMobileDevice${provider === 'fcm' ? 'Fcm' : 'Apns'}`,
          summary: `Register a mobile app's ${provider.toUpperCase()} push token (mobile clients call /api/v1/devices/${provider}-token with a bearer token)`,
          description:
            'Body: the token, the platform (ios or android; apns is ios only) and optional device metadata, named fields and others (see the body schema), ' +
            'stored with the device. Same device rules as POST /api/notifications/push-token. Another provider (`/api/v1/devices/expo-token`, …) is ' +
            '400 VALIDATION_ERROR naming the supported ones. Any signed-in user, for themself. An `apns` token with platform android is 400 VALIDATION_ERROR, ' +
            'as is a token over 2,048 bytes.',
          body: deviceTokenBody,
          response: { 200: envelope(deviceSchema) },
        },
      },
      async (req) => ok(await service.registerMobileDevice(ctxOf(req), provider, req.body)),
    );
  }
  // Any other <provider>-token: a 400 that names the supported providers instead of a bare 404
  // (the static routes above win over this one). Not documented: it only ever refuses.
  r.post('/api/devices/:provider-token', { schema: { tags, operationId: 'refuseMobileDeviceProvider', params: deviceProviderParams, hide: true } }, async (req) =>
    service.refuseMobileProvider(req.params.provider),
  );
};

export const notificationsModule: AppModule = { name: 'notifications', routes, jobs: notificationsJobs };
