import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/platform/clock.js';
import { newObjectKey } from '../../../src/platform/storage/index.js';
import { S3Storage } from '../../../src/platform/storage/s3.js';
import { freePort } from '../../helpers/ports.js';

/**
 * Against a real S3-compatible server on loopback: @20minutes/s3rver (the maintained fork of
 * s3rver, Node >= 20). Unlike s3rver 3.x it verifies SigV4 signatures, expiry and signed
 * headers, so the presigned-URL tests below mean something. It ships no types.
 */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverCtor = new (options: { address: string; port: number; silent: boolean; directory: string; configureBuckets: Array<{ name: string }> }) => S3rverInstance;
const S3rver = createRequire(import.meta.url)('@20minutes/s3rver') as S3rverCtor;

const BUCKET = 'lms-test-files';
// s3rver's built-in account.
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

let server: S3rverInstance;
let dir: string;
let endpoint: string;
let clock: ManualClock;
let storage: S3Storage;

const makeStorage = (prefix?: string) => new S3Storage({ bucket: BUCKET, prefix, endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS, clock });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lms-s3rver-'));
  // The bucket is created at start-up: this s3rver build mis-signs bucket-level requests
  // (it drops the SDK's trailing slash), object requests are unaffected.
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: BUCKET }] });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  // Real time: the server checks presigned expiry against its own clock.
  clock = new ManualClock(new Date());
  storage = makeStorage();
});

describe('S3Storage objects', () => {
  it('puts, gets, stats, checks and deletes an object', async () => {
    const key = newObjectKey('inst-1', 'captions', 'vtt');
    const body = Buffer.from('WEBVTT\n\n00:00.000 --> 00:01.000\nhello\n');

    expect(await storage.exists(key)).toBe(false);
    expect(await storage.stat(key)).toBeNull();
    expect(await storage.put(key, body, 'text/vtt')).toEqual({ key, size: body.length, contentType: 'text/vtt' });
    expect(await storage.exists(key)).toBe(true);
    expect(await storage.stat(key)).toEqual({ key, size: body.length, contentType: 'text/vtt' });
    expect((await storage.get(key)).equals(body)).toBe(true);

    await storage.delete(key);
    expect(await storage.exists(key)).toBe(false);
    await expect(storage.get(key)).rejects.toMatchObject({ name: 'StorageError', code: 'NOT_FOUND' });
    await storage.delete(key); // idempotent
  });

  it('round-trips binary content', async () => {
    const key = newObjectKey('inst-1', 'files', 'bin');
    const body = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256));
    await storage.put(key, body, 'application/octet-stream');
    expect((await storage.get(key)).equals(body)).toBe(true);
  });

  it('is write-once: a second put on the same key is refused and the first content stays', async () => {
    const key = newObjectKey('inst-1', 'files', 'txt');
    await storage.put(key, Buffer.from('first'), 'text/plain');
    await expect(storage.put(key, Buffer.from('second'), 'text/plain')).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect((await storage.get(key)).toString()).toBe('first');
  });

  it('writes under the configured prefix', async () => {
    const prefixed = makeStorage('tenant-files/v1');
    const key = newObjectKey('inst-1', 'files', 'txt');
    await prefixed.put(key, Buffer.from('p'), 'text/plain');
    const head = await prefixed.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: `tenant-files/v1/${key}` }));
    expect(head.ContentLength).toBe(1);
    expect(await storage.exists(key)).toBe(false);
    expect((await prefixed.get(key)).toString()).toBe('p');
  });

  it('refuses invalid keys before talking to the server', async () => {
    for (const key of ['../x', 'a//b', '/abs', 'A/B']) {
      await expect(storage.put(key, Buffer.from('x'), 'text/plain')).rejects.toMatchObject({ code: 'INVALID_KEY' });
      await expect(storage.get(key)).rejects.toMatchObject({ code: 'INVALID_KEY' });
      await expect(storage.urlFor(key)).rejects.toMatchObject({ code: 'INVALID_KEY' });
    }
  });
});

describe('S3Storage failures', () => {
  it('an unreachable server is StorageError UNAVAILABLE, the SDK error kept as the cause', async () => {
    // A port nothing listens on: the connection is refused.
    const down = new S3Storage({ bucket: BUCKET, endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS, clock });
    const key = newObjectKey('inst-1', 'files', 'txt');
    for (const op of [() => down.put(key, Buffer.from('x'), 'text/plain'), () => down.get(key), () => down.stat(key), () => down.delete(key)]) {
      const err = await op().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ name: 'StorageError', code: 'UNAVAILABLE', cause: expect.anything() });
    }
    down.client.destroy();
  });
});

describe('S3Storage presigned URLs', () => {
  it('accepts a presigned PUT performed with fetch, then serves the object', async () => {
    const key = newObjectKey('inst-1', 'uploads', 'pdf');
    const upload = await storage.presignUpload(key, 'application/pdf', 1_000_000, 300);
    expect(upload).toMatchObject({ method: 'PUT', key, headers: { 'Content-Type': 'application/pdf' }, maxBytes: 1_000_000 });
    expect(new Date(upload.expiresAt).getTime()).toBe(clock.now().getTime() + 300_000);
    // The checksum of an empty body must not be baked into the URL (see s3.ts).
    expect(upload.url).not.toMatch(/x-amz-checksum/i);

    const body = Buffer.from('%PDF-1.7 fake pdf body');
    const res = await fetch(upload.url, { method: upload.method, headers: upload.headers, body });
    expect(res.status).toBe(200);

    expect((await storage.get(key)).equals(body)).toBe(true);
    // What a service checks when the upload is registered.
    expect(await storage.stat(key)).toEqual({ key, size: body.length, contentType: 'application/pdf' });
  });

  it('refuses a presigned PUT with another content type (the type is signed)', async () => {
    const key = newObjectKey('inst-1', 'uploads', 'pdf');
    const upload = await storage.presignUpload(key, 'application/pdf', 1_000_000, 300);
    const res = await fetch(upload.url, { method: 'PUT', headers: { 'Content-Type': 'text/html' }, body: '<script>' });
    expect(res.status).toBe(403);
    expect(await storage.exists(key)).toBe(false);
  });

  it('serves a presigned GET fetched with fetch, valid for an hour by default', async () => {
    const key = newObjectKey('inst-1', 'files', 'txt');
    await storage.put(key, Buffer.from('hello from s3'), 'text/plain');
    const url = await storage.urlFor(key);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('3600');

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('hello from s3');
  });

  it('refuses a tampered presigned GET', async () => {
    const key = newObjectKey('inst-1', 'files', 'txt');
    const other = newObjectKey('inst-1', 'files', 'txt');
    await storage.put(key, Buffer.from('a'), 'text/plain');
    await storage.put(other, Buffer.from('b'), 'text/plain');
    const url = new URL(await storage.urlFor(key));

    const badSig = new URL(url);
    const sig = badSig.searchParams.get('X-Amz-Signature')!;
    badSig.searchParams.set('X-Amz-Signature', sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0'));
    expect((await fetch(badSig)).status).toBe(403);

    const otherKey = new URL(url);
    otherKey.pathname = otherKey.pathname.replace(key, other);
    expect((await fetch(otherKey)).status).toBe(403);
  });

  it('refuses an expired presigned GET', async () => {
    const key = newObjectKey('inst-1', 'files', 'txt');
    await storage.put(key, Buffer.from('old'), 'text/plain');
    clock.advance(-2 * 3600 * 1000); // signed two hours ago, valid for one
    const res = await fetch(await storage.urlFor(key, 3600));
    expect(res.status).toBe(403);
  });
});
