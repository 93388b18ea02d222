import { isIP } from 'node:net';
import { request } from 'undici';
import webpush from 'web-push';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { Logger } from '../logger.js';

/**
 * Push delivery (DESIGN.md §2, §4): web push to browsers with VAPID (RFC 8030, 8291, 8292),
 * and mobile push through a provider (`MobilePushProvider`; by default one that only logs).
 */

export type PushPlatform = 'web' | 'ios' | 'android';

export interface PushDevice {
  token: string;
  platform: PushPlatform;
  /** 'webpush' for web; 'fcm' | 'apns' for mobile */
  provider: string;
}

export interface PushPayload {
  title: string;
  body: string;
  url?: string | null;
  data?: Record<string, unknown>;
}

export type PushResult =
  | { ok: true }
  | {
      ok: false;
      /** the device is gone (404/410): the caller deletes its row */
      gone: boolean;
      permanent: boolean;
      reason: string;
    };

export interface PushSender {
  send(device: PushDevice, payload: PushPayload): Promise<PushResult>;
}

export interface MobilePushProvider {
  readonly name: string;
  send(device: PushDevice, payload: PushPayload): Promise<PushResult>;
}

/** How long the push service keeps an undelivered message for an offline browser. */
const WEB_PUSH_TTL_SECONDS = 24 * 3600;
const WEB_PUSH_TIMEOUT_MS = 10_000;

/** A browser's PushSubscription as `JSON.stringify(subscription)` gives it. */
const subscriptionSchema = z.object({
  endpoint: z
    .string()
    .url()
    .refine((v) => /^https?:\/\//i.test(v)),
  keys: z.object({ p256dh: z.string().min(1), auth: z.string().min(1) }),
});

/** Mobile push that only logs the message: the default until a real provider (FCM, APNs) is configured. */
export class LoggingMobilePushProvider implements MobilePushProvider {
  readonly name = 'log';
  constructor(private readonly log: Logger) {}

  async send(device: PushDevice, payload: PushPayload): Promise<PushResult> {
    this.log.info(`[lms] mobile push (${device.platform}/${device.provider}, not sent: no mobile push provider) to ${tokenHint(device.token)}: ${payload.title}: ${payload.body}`);
    return { ok: true };
  }
}

/**
 * In production a push endpoint must look like a push service: https, a DNS name, not
 * loopback or a local name. A subscription is user input, and the worker POSTs to its
 * endpoint: this keeps the worker from being pointed at internal addresses. Development and
 * tests accept any http(s) endpoint (a local stand-in for the push service).
 */
export function isAllowedPushEndpoint(endpoint: string, production: boolean): boolean {
  if (!production) return true;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (url.protocol !== 'https:' || url.username || url.password) return false;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return false;
  if (!host.includes('.') || host === 'localhost' || /\.(localhost|local|internal|home|lan|intranet|corp)$/.test(host)) return false;
  return true;
}

export function createPushSender(
  config: Pick<Config, 'VAPID_PUBLIC_KEY' | 'VAPID_PRIVATE_KEY' | 'VAPID_SUBJECT'> & { NODE_ENV?: Config['NODE_ENV'] },
  log: Logger,
  mobile: MobilePushProvider = new LoggingMobilePushProvider(log),
): PushSender {
  const vapid =
    config.VAPID_PUBLIC_KEY && config.VAPID_PRIVATE_KEY ? { subject: config.VAPID_SUBJECT, publicKey: config.VAPID_PUBLIC_KEY, privateKey: config.VAPID_PRIVATE_KEY } : undefined;
  return {
    async send(device, payload) {
      if (device.platform !== 'web') return mobile.send(device, payload);
      if (!vapid) return failed(false, true, 'push_not_configured');
      return sendWebPush(device.token, payload, vapid, log, config.NODE_ENV === 'production');
    },
  };
}

function failed(gone: boolean, permanent: boolean, reason: string): PushResult {
  return { ok: false, gone, permanent, reason };
}

async function sendWebPush(token: string, payload: PushPayload, vapidDetails: webpush.VapidKeys & { subject: string }, log: Logger, production: boolean): Promise<PushResult> {
  let details: webpush.RequestDetails;
  try {
    const subscription = subscriptionSchema.parse(JSON.parse(token));
    // Encrypts the payload for the subscription (aes128gcm) and signs the VAPID token for the endpoint's origin.
    details = webpush.generateRequestDetails(subscription, JSON.stringify(payload), { vapidDetails, TTL: WEB_PUSH_TTL_SECONDS });
  } catch {
    // Not a PushSubscription, or keys the payload cannot be encrypted for: no retry will help.
    return failed(true, true, 'invalid_subscription');
  }
  // Refused endpoints are gone: their device row is deleted, nothing is sent.
  if (!isAllowedPushEndpoint(details.endpoint, production)) return failed(true, true, 'push_endpoint_refused');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) {
    // undici computes the length of the body itself.
    if (name.toLowerCase() !== 'content-length' && value !== undefined) headers[name] = String(value);
  }
  const origin = new URL(details.endpoint).origin;
  let status: number;
  try {
    const res = await request(details.endpoint, {
      method: 'POST',
      headers,
      body: details.body ?? undefined,
      signal: AbortSignal.timeout(WEB_PUSH_TIMEOUT_MS),
    });
    status = res.statusCode;
    await res.body.dump();
  } catch (err) {
    log.warn(`[lms] web push to ${origin} failed: ${(err as Error)?.message ?? err}`);
    return failed(false, false, 'push_unavailable');
  }
  if (status >= 200 && status < 300) return { ok: true };
  if (status === 404 || status === 410) return failed(true, true, 'push_endpoint_gone');
  if (status === 429 || status >= 500) {
    log.warn(`[lms] web push to ${origin} answered ${status}`);
    return failed(false, false, 'push_unavailable');
  }
  log.warn(`[lms] web push to ${origin} refused with ${status}`);
  return failed(false, true, `push_rejected_${status}`);
}

/** A device token for a log line: enough to tell devices apart, not enough to use. */
function tokenHint(token: string): string {
  return token.length > 12 ? `${token.slice(0, 8)}…` : '…';
}

/** A fresh VAPID key pair as env lines, what `lms vapid` prints. */
export function vapidKeyLines(): string {
  const { publicKey, privateKey } = newVapidKeys();
  return `VAPID_PUBLIC_KEY=${publicKey}\nVAPID_PRIVATE_KEY=${privateKey}`;
}

/** A fresh VAPID key pair (base64url, as the config expects). */
export function newVapidKeys(): { publicKey: string; privateKey: string } {
  return webpush.generateVAPIDKeys();
}
