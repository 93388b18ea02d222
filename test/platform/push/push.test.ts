/**
 * Web push against a local plain-HTTP server standing in for the push service: the VAPID token
 * (RFC 8292) is verified with the public key, the body decrypted as the browser would (RFC 8291,
 * aes128gcm), and the service's answers mapped to results. Mobile push: the logging provider.
 */
import { createDecipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { importJWK, jwtVerify } from 'jose';
import webpush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPushSender,
  isAllowedPushEndpoint,
  LoggingMobilePushProvider,
  vapidKeyLines,
  type PushDevice,
  type PushPayload,
  type PushSender,
} from '../../../src/platform/push/push.js';
import { loadConfig } from '../../../src/config.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const SUBJECT = 'mailto:push-admin@lms.test';
const vapid = webpush.generateVAPIDKeys();
const STATUS: Record<string, number> = { '/ok': 201, '/accepted': 202, '/gone': 410, '/missing': 404, '/down': 500, '/busy': 429, '/bad': 400, '/big': 413 };

let server: Server;
let origin: string;
const received: Received[] = [];

function recordingLog() {
  const lines: string[] = [];
  const push = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  return { lines, info: push, warn: push, error: push };
}

/** A browser's push subscription: its ECDH key pair and auth secret stay here to decrypt. */
function browserSubscription(path: string): { token: string; ua: ECDH; auth: Buffer } {
  const ua = createECDH('prime256v1');
  ua.generateKeys();
  const auth = randomBytes(16);
  const token = JSON.stringify({ endpoint: `${origin}${path}`, expirationTime: null, keys: { p256dh: ua.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } });
  return { token, ua, auth };
}

/** RFC 8291 §3.4 + RFC 8188: what the browser does with the push message body (one record). */
function decrypt(body: Buffer, ua: ECDH, auth: Buffer): string {
  const salt = body.subarray(0, 16);
  const idlen = body[20];
  const asPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  const ecdhSecret = ua.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding.
  return padded.subarray(0, padded.lastIndexOf(2)).toString('utf8');
}

const payload: PushPayload = { title: 'New grade', body: 'Algebra quiz: 95 %', url: 'https://lms.test/courses/algebra', data: { kind: 'grade', deliveryId: 'd_1' } };

function sender(log = recordingLog()): PushSender {
  return createPushSender({ VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: SUBJECT }, log);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.statusCode = STATUS[req.url ?? ''] ?? 400;
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server?.close();
  if (server) await once(server, 'close');
});

describe('web push', () => {
  it('POSTs the encrypted payload with a VAPID token that verifies with the public key (aud = endpoint origin, sub, exp)', async () => {
    const { token, ua, auth } = browserSubscription('/ok');
    const before = received.length;
    const result = await sender().send({ token, platform: 'web', provider: 'webpush' }, payload);
    expect(result).toEqual({ ok: true });
    expect(received.length).toBe(before + 1);
    const req = received[before];
    expect(req.path).toBe('/ok');

    const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(String(req.headers.authorization));
    expect(m, `Authorization: ${req.headers.authorization}`).not.toBeNull();
    const [, jwt, k] = m!;
    expect(k).toBe(vapid.publicKey);
    const raw = Buffer.from(vapid.publicKey, 'base64url');
    const key = await importJWK({ kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') }, 'ES256');
    const { payload: claims, protectedHeader } = await jwtVerify(jwt, key, { algorithms: ['ES256'], audience: origin, subject: SUBJECT });
    expect(protectedHeader.alg).toBe('ES256');
    expect(claims.aud).toBe(origin);
    expect(claims.sub).toBe(SUBJECT);
    const now = Math.floor(Date.now() / 1000);
    expect(claims.exp).toBeGreaterThan(now);
    expect(claims.exp).toBeLessThanOrEqual(now + 24 * 3600);

    expect(req.headers['content-encoding']).toBe('aes128gcm');
    expect(req.headers['content-type']).toBe('application/octet-stream');
    expect(req.headers.ttl).toBe(String(24 * 3600));
    expect(req.headers.urgency).toBe('normal');
    expect(req.body.length).toBeGreaterThan(86);
    expect(req.body.includes(Buffer.from('Algebra'))).toBe(false);
    expect(JSON.parse(decrypt(req.body, ua, auth))).toEqual(payload);
  });

  it('another key pair does not verify the token', async () => {
    const { token } = browserSubscription('/accepted');
    const before = received.length;
    expect(await sender().send({ token, platform: 'web', provider: 'webpush' }, payload)).toEqual({ ok: true });
    const jwt = /t=([^,\s]+)/.exec(String(received[before].headers.authorization))![1];
    const other = Buffer.from(webpush.generateVAPIDKeys().publicKey, 'base64url');
    const key = await importJWK({ kty: 'EC', crv: 'P-256', x: other.subarray(1, 33).toString('base64url'), y: other.subarray(33, 65).toString('base64url') }, 'ES256');
    await expect(jwtVerify(jwt, key)).rejects.toThrow(/signature/);
  });

  it.each([
    ['/accepted', { ok: true }],
    ['/gone', { ok: false, gone: true, permanent: true, reason: 'push_endpoint_gone' }],
    ['/missing', { ok: false, gone: true, permanent: true, reason: 'push_endpoint_gone' }],
    ['/down', { ok: false, gone: false, permanent: false, reason: 'push_unavailable' }],
    ['/busy', { ok: false, gone: false, permanent: false, reason: 'push_unavailable' }],
    ['/bad', { ok: false, gone: false, permanent: true, reason: 'push_rejected_400' }],
    ['/big', { ok: false, gone: false, permanent: true, reason: 'push_rejected_413' }],
  ])('the push service answering %s → %o', async (path, expected) => {
    const { token } = browserSubscription(path);
    expect(await sender().send({ token, platform: 'web', provider: 'webpush' }, payload)).toEqual(expected);
  });

  it('an unreachable push service is transient', async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as { port: number };
    probe.close();
    await once(probe, 'close');
    const log = recordingLog();
    const token = JSON.stringify({ endpoint: `http://127.0.0.1:${port}/push/x`, keys: JSON.parse(browserSubscription('/ok').token).keys });
    expect(await sender(log).send({ token, platform: 'web', provider: 'webpush' }, payload)).toEqual({ ok: false, gone: false, permanent: false, reason: 'push_unavailable' });
    expect(log.lines.join('\n')).toMatch(/web push to http:\/\/127\.0\.0\.1:\d+ failed/);
  });

  it('a token that is not a PushSubscription is invalid_subscription (gone, permanent), with no request', async () => {
    const before = received.length;
    const keys = JSON.parse(browserSubscription('/ok').token).keys;
    for (const token of [
      'not json',
      '{}',
      JSON.stringify({ endpoint: `${origin}/ok` }),
      JSON.stringify({ endpoint: 'ftp://push.test/x', keys }),
      JSON.stringify({ endpoint: `${origin}/ok`, keys: { p256dh: 'AAAA', auth: keys.auth } }),
      'fcm-registration-token-abc',
    ]) {
      expect(await sender().send({ token, platform: 'web', provider: 'webpush' }, payload)).toEqual({ ok: false, gone: true, permanent: true, reason: 'invalid_subscription' });
    }
    expect(received.length).toBe(before);
  });

  it('in production an endpoint must be https on a DNS name; loopback, IPs and local names are refused without a request', async () => {
    const before = received.length;
    const keys = JSON.parse(browserSubscription('/ok').token).keys;
    const production = createPushSender({ VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: SUBJECT, NODE_ENV: 'production' }, recordingLog());
    for (const endpoint of [
      `${origin}/ok`,
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://10.0.0.8/x',
      'https://localhost/x',
      'https://metadata.internal/x',
      'https://printer.local/x',
      'https://intranet/x',
    ]) {
      const token = JSON.stringify({ endpoint, keys });
      expect(await production.send({ token, platform: 'web', provider: 'webpush' }, payload), endpoint).toEqual({
        ok: false,
        gone: true,
        permanent: true,
        reason: 'push_endpoint_refused',
      });
    }
    expect(received.length).toBe(before);
    expect(isAllowedPushEndpoint('https://fcm.googleapis.com/fcm/send/abc', true)).toBe(true);
    expect(isAllowedPushEndpoint('https://updates.push.services.mozilla.com/wpush/v2/x', true)).toBe(true);
    expect(isAllowedPushEndpoint('http://fcm.googleapis.com/x', true)).toBe(false);
    expect(isAllowedPushEndpoint('http://127.0.0.1:9/x', false)).toBe(true);
  });

  it('without VAPID keys web push is push_not_configured (permanent, not gone), with no request', async () => {
    const before = received.length;
    const config = loadConfig({});
    expect(config.VAPID_SUBJECT).toBe('mailto:admin@lms.localhost');
    const unconfigured = createPushSender(config, recordingLog());
    const { token } = browserSubscription('/ok');
    expect(await unconfigured.send({ token, platform: 'web', provider: 'webpush' }, payload)).toEqual({ ok: false, gone: false, permanent: true, reason: 'push_not_configured' });
    expect(received.length).toBe(before);
  });
});

describe('mobile push', () => {
  const device: PushDevice = { token: 'fcm-registration-token-0123456789', platform: 'android', provider: 'fcm' };

  it('the default logging provider logs the message and answers ok', async () => {
    const log = recordingLog();
    const provider = new LoggingMobilePushProvider(log);
    expect(provider.name).toBe('log');
    expect(await createPushSender(loadConfig({}), log).send(device, payload)).toEqual({ ok: true });
    expect(await provider.send({ ...device, platform: 'ios', provider: 'apns' }, payload)).toEqual({ ok: true });
    expect(log.lines).toHaveLength(2);
    expect(log.lines[0]).toContain('android/fcm');
    expect(log.lines[0]).toContain('New grade');
    expect(log.lines[0]).toContain('Algebra quiz: 95 %');
    expect(log.lines[1]).toContain('ios/apns');
    // Only a hint of the device token goes to the log.
    expect(log.lines.join('\n')).not.toContain(device.token);
  });

  it('ios and android go to the given provider, web never does', async () => {
    const calls: PushDevice[] = [];
    const provider = { name: 'fake', send: async (d: PushDevice) => (calls.push(d), { ok: false as const, gone: true, permanent: true, reason: 'unregistered' }) };
    const push = createPushSender(loadConfig({}), recordingLog(), provider);
    expect(await push.send({ token: 'apns-token', platform: 'ios', provider: 'apns' }, payload)).toEqual({ ok: false, gone: true, permanent: true, reason: 'unregistered' });
    expect(await push.send(device, payload)).toMatchObject({ ok: false, reason: 'unregistered' });
    expect(await push.send({ token: 'x', platform: 'web', provider: 'webpush' }, payload)).toMatchObject({ reason: 'push_not_configured' });
    expect(calls.map((d) => d.platform)).toEqual(['ios', 'android']);
  });
});

describe('VAPID keys', () => {
  it('vapidKeyLines prints a fresh, matching pair that the configuration accepts', () => {
    const text = vapidKeyLines();
    const m = /^VAPID_PUBLIC_KEY=([A-Za-z0-9_-]+)\nVAPID_PRIVATE_KEY=([A-Za-z0-9_-]+)$/.exec(text);
    expect(m).not.toBeNull();
    const config = loadConfig({ VAPID_PUBLIC_KEY: m![1], VAPID_PRIVATE_KEY: m![2] });
    expect(config.VAPID_PUBLIC_KEY).toBe(m![1]);
    expect(vapidKeyLines()).not.toBe(text);
  });
});
