import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { ManualClock } from '../../../src/platform/clock.js';
import { LazyS3Storage, LocalStorage, StorageError, createStorage, isValidKey, newObjectKey, parseStorageUrl } from '../../../src/platform/storage/index.js';
import { S3Storage } from '../../../src/platform/storage/s3.js';
import { verifySignedUrl } from '../../../src/platform/storage/signed-urls.js';
import { stageToFile } from '../../../src/platform/storage/staging.js';

const SECRET = 'test-secret-0123456789abcdef0123456789';
const BASE = 'http://lms.test';

let root: string;
let clock: ManualClock;
let storage: LocalStorage;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'lms-local-storage-'));
  clock = new ManualClock('2026-03-02T09:00:00.000Z');
  storage = new LocalStorage({ root, publicBaseUrl: BASE, authSecret: SECRET, clock });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Split a URL we issued into what a route sees: the key after the prefix and the query. */
function asRoute(url: string, prefix: string) {
  const u = new URL(url);
  expect(u.origin).toBe(BASE);
  expect(u.pathname.startsWith(prefix)).toBe(true);
  return { key: u.pathname.slice(prefix.length), query: Object.fromEntries(u.searchParams) as Record<string, string> };
}

describe('LocalStorage objects', () => {
  it('puts, gets, stats, checks and deletes an object', async () => {
    const key = 'inst-1/captions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.vtt';
    const body = Buffer.from('WEBVTT\n\n00:00.000 --> 00:01.000\nhello\n');

    expect(await storage.exists(key)).toBe(false);
    expect(await storage.stat(key)).toBeNull();

    const stored = await storage.put(key, body, 'text/vtt');
    expect(stored).toEqual({ key, size: body.length, contentType: 'text/vtt' });
    expect(await storage.exists(key)).toBe(true);
    expect(await storage.stat(key)).toEqual({ key, size: body.length, contentType: 'text/vtt' });
    expect((await storage.get(key)).equals(body)).toBe(true);

    await storage.delete(key);
    expect(await storage.exists(key)).toBe(false);
    await expect(storage.get(key)).rejects.toMatchObject({ name: 'StorageError', code: 'NOT_FOUND' });
    // Deleting again is not an error.
    await storage.delete(key);
  });

  it('treats a key that is only a folder of other keys as missing', async () => {
    await storage.put('a/b.txt', Buffer.from('x'), 'text/plain');
    expect(await storage.stat('a')).toBeNull();
    await expect(storage.get('a')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await storage.delete('a');
    expect(await storage.exists('a/b.txt')).toBe(true);
  });

  it('stores bytes as given, binary included', async () => {
    const body = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    await storage.put('a/bin.dat', body, 'application/octet-stream');
    expect((await storage.get('a/bin.dat')).equals(body)).toBe(true);
  });

  it('is write-once: a second put on the same key is refused and the first content stays', async () => {
    await storage.put('a/once.txt', Buffer.from('first'), 'text/plain');
    await expect(storage.put('a/once.txt', Buffer.from('second'), 'text/plain')).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
    expect((await storage.get('a/once.txt')).toString()).toBe('first');
  });

  it('lets exactly one of two concurrent puts on a key win', async () => {
    const results = await Promise.allSettled([storage.put('a/race.txt', Buffer.from('one'), 'text/plain'), storage.put('a/race.txt', Buffer.from('two'), 'text/plain')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(['one', 'two']).toContain((await storage.get('a/race.txt')).toString());
  });

  it('leaves no temporary files behind', async () => {
    await storage.put('a/x.txt', Buffer.from('x'), 'text/plain');
    await storage.put('a/x.txt', Buffer.from('y'), 'text/plain').catch(() => undefined);
    expect(await readdir(join(root, '.tmp'))).toEqual([]);
  });

  it('refuses a content type that could break a header', async () => {
    await expect(storage.put('a/b.txt', Buffer.from('x'), 'text/plain\r\nX-Evil: 1')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('LocalStorage putStream minBytes', () => {
  it('refuses a shorter stream with TOO_SMALL and stores nothing', async () => {
    await expect(storage.putStream('a/empty.txt', Readable.from([]), 'text/plain', 10, 1)).rejects.toMatchObject({ code: 'TOO_SMALL' });
    expect(await storage.exists('a/empty.txt')).toBe(false);
    expect(await readdir(join(root, '.tmp'))).toEqual([]);
    // Without it an empty object is stored (a SCORM package's empty file).
    expect(await storage.putStream('a/empty.txt', Readable.from([]), 'text/plain', 10)).toMatchObject({ size: 0 });
  });
});

describe('LocalStorage disk failures', () => {
  const cutOff = (text: string) => {
    let reads = 0;
    return new Readable({
      read() {
        if (reads++ === 0) this.push(text);
        else this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
      },
    });
  };

  it('are StorageError UNAVAILABLE, the system error kept as the cause', async () => {
    // The root is a regular file: every write below it fails with ENOTDIR.
    const file = join(root, 'not-a-dir');
    await writeFile(file, 'x');
    const broken = new LocalStorage({ root: file, publicBaseUrl: BASE, authSecret: SECRET, clock });
    for (const write of [() => broken.put('a/b.txt', Buffer.from('x'), 'text/plain'), () => broken.putStream('a/b.txt', Readable.from([Buffer.from('x')]), 'text/plain', 10)]) {
      const err = await write().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StorageError);
      expect(err).toMatchObject({ code: 'UNAVAILABLE', cause: { code: 'ENOTDIR' } });
    }
  });

  it('staging tells a body that breaks off (thrown as it is) from a disk that fails', async () => {
    await expect(stageToFile(cutOff('half'), join(root, 'stage'), 100)).rejects.toMatchObject({ message: 'aborted', code: 'ECONNRESET' });
    expect(await readdir(join(root, 'stage'))).toEqual([]);
    await expect(storage.putStream('a/cut.txt', cutOff('half'), 'text/plain', 100)).rejects.not.toBeInstanceOf(StorageError);
    expect(await storage.exists('a/cut.txt')).toBe(false);
    await writeFile(join(root, 'file'), 'x');
    await expect(stageToFile(Readable.from([Buffer.from('x')]), join(root, 'file', 'stage'), 100)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(stageToFile(Readable.from([Buffer.from('too long')]), join(root, 'stage'), 3)).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });
});

describe('LocalStorage key validation', () => {
  const badKeys = [
    '',
    '../escape.txt',
    'a/../../escape.txt',
    'a/./b.txt',
    'a/..',
    '..',
    '/etc/passwd',
    'a//b.txt',
    'a/b/',
    '.meta/x.json',
    '.tmp/x',
    'A/Upper.txt',
    'a\\..\\b',
    'a/b c.txt',
    'a/%2e%2e/b',
    'a/b\u0000.txt',
    'a/b\n.txt',
    'x'.repeat(600),
  ];

  it.each(badKeys)('refuses %j on every operation', async (key) => {
    expect(isValidKey(key)).toBe(false);
    const invalid = { name: 'StorageError', code: 'INVALID_KEY' };
    await expect(storage.put(key, Buffer.from('x'), 'text/plain')).rejects.toMatchObject(invalid);
    await expect(storage.get(key)).rejects.toMatchObject(invalid);
    await expect(storage.stat(key)).rejects.toMatchObject(invalid);
    await expect(storage.exists(key)).rejects.toMatchObject(invalid);
    await expect(storage.delete(key)).rejects.toMatchObject(invalid);
    await expect(storage.urlFor(key)).rejects.toMatchObject(invalid);
    await expect(storage.presignUpload(key, 'text/plain', 100, 60)).rejects.toMatchObject(invalid);
  });

  it('cannot read or delete a file outside the root', async () => {
    const outside = join(root, '..', `outside-${Date.now()}.txt`);
    await writeFile(outside, 'secret');
    try {
      await expect(storage.get(`../${outside.split('/').pop()}`)).rejects.toBeInstanceOf(StorageError);
      await expect(storage.delete(`../${outside.split('/').pop()}`)).rejects.toBeInstanceOf(StorageError);
    } finally {
      await rm(outside, { force: true });
    }
  });
});

describe('LocalStorage signed download URLs', () => {
  const key = 'inst-1/files/report.pdf';

  it('issues a URL under /api/files/raw that verifies until it expires', async () => {
    const url = await storage.urlFor(key);
    expect(url).toMatch(/^http:\/\/lms\.test\/api\/files\/raw\/inst-1\/files\/report\.pdf\?expires=\d+&sig=[0-9a-f]{64}$/);
    const { key: routeKey, query } = asRoute(url, '/api/files/raw/');
    expect(Number(query.expires)).toBe(Math.floor(clock.now().getTime() / 1000) + 3600);

    expect(verifySignedUrl({ authSecret: SECRET, method: 'GET', key: routeKey, query, now: clock.now() })).toMatchObject({
      ok: true,
      method: 'GET',
      key,
    });

    // Still valid on the last second, refused after it.
    clock.advance(3600 * 1000);
    expect(verifySignedUrl({ authSecret: SECRET, method: 'GET', key: routeKey, query, now: clock.now() }).ok).toBe(true);
    clock.advance(1000);
    expect(verifySignedUrl({ authSecret: SECRET, method: 'GET', key: routeKey, query, now: clock.now() })).toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('honours a custom expiry', async () => {
    const { query } = asRoute(await storage.urlFor(key, 60), '/api/files/raw/');
    expect(Number(query.expires)).toBe(Math.floor(clock.now().getTime() / 1000) + 60);
    await expect(storage.urlFor(key, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('refuses tampered URLs', async () => {
    const { key: routeKey, query } = asRoute(await storage.urlFor(key), '/api/files/raw/');
    const check = (k: string, q: Record<string, unknown>, authSecret = SECRET) => verifySignedUrl({ authSecret, method: 'GET', key: k, query: q, now: clock.now() });

    expect(check('inst-1/files/other.pdf', query)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check('inst-2/files/report.pdf', query)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check(routeKey, { ...query, expires: String(Number(query.expires) + 86_400) })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const flipped = query.sig.slice(0, -1) + (query.sig.endsWith('0') ? '1' : '0');
    expect(check(routeKey, { ...query, sig: flipped })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check(routeKey, query, 'another-secret-0123456789abcdef')).toEqual({ ok: false, reason: 'bad_signature' });
    // A download signature does not authorise an upload of the same key.
    expect(
      verifySignedUrl({
        authSecret: SECRET,
        method: 'PUT',
        key: routeKey,
        query: { ...query, ct: 'text/plain', max: '10' },
        now: clock.now(),
      }),
    ).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses malformed parameters', async () => {
    const { key: routeKey, query } = asRoute(await storage.urlFor(key), '/api/files/raw/');
    const check = (k: string, q: Record<string, unknown>) => verifySignedUrl({ authSecret: SECRET, method: 'GET', key: k, query: q, now: clock.now() });
    expect(check(routeKey, { expires: query.expires })).toEqual({ ok: false, reason: 'malformed' });
    expect(check(routeKey, { sig: query.sig })).toEqual({ ok: false, reason: 'malformed' });
    expect(check(routeKey, { ...query, expires: '-1' })).toEqual({ ok: false, reason: 'malformed' });
    expect(check(routeKey, { ...query, sig: [query.sig, query.sig] })).toEqual({ ok: false, reason: 'malformed' });
    expect(check(routeKey, { ...query, sig: query.sig.toUpperCase() })).toEqual({ ok: false, reason: 'malformed' });
    expect(check('../etc/passwd', query)).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('LocalStorage presigned uploads', () => {
  const key = 'inst-1/uploads/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.svg';

  it('signs method, key, content type, size limit and expiry', async () => {
    const upload = await storage.presignUpload(key, 'image/svg+xml', 1_048_576, 300);
    expect(upload).toMatchObject({
      method: 'PUT',
      key,
      headers: { 'Content-Type': 'image/svg+xml' },
      expiresAt: '2026-03-02T09:05:00.000Z',
      maxBytes: 1_048_576,
    });
    const { key: routeKey, query } = asRoute(upload.url, '/api/upload/');
    expect(query).toMatchObject({ ct: 'image/svg+xml', max: '1048576' });

    const check = (q: Record<string, unknown>, k = routeKey) => verifySignedUrl({ authSecret: SECRET, method: 'PUT', key: k, query: q, now: clock.now() });
    expect(check(query)).toEqual({
      ok: true,
      method: 'PUT',
      key,
      contentType: 'image/svg+xml',
      maxBytes: 1_048_576,
      expiresAt: Math.floor(clock.now().getTime() / 1000) + 300,
    });

    // Every signed value is bound: a bigger limit, another type, another key, a later expiry.
    expect(check({ ...query, max: '999999999' })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check({ ...query, ct: 'text/html' })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check(query, 'inst-1/uploads/other.svg')).toEqual({ ok: false, reason: 'bad_signature' });
    expect(check({ ...query, expires: String(Number(query.expires) + 1) })).toEqual({ ok: false, reason: 'bad_signature' });
    // An upload signature does not authorise a download.
    expect(verifySignedUrl({ authSecret: SECRET, method: 'GET', key: routeKey, query, now: clock.now() }).ok).toBe(false);

    clock.advance(301_000);
    expect(check(query)).toEqual({ ok: false, reason: 'expired' });
  });

  it('validates its arguments', async () => {
    await expect(storage.presignUpload(key, 'not a type', 10, 60)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(storage.presignUpload(key, 'text/plain', 0, 60)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(storage.presignUpload(key, 'text/plain', 1.5, 60)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(storage.presignUpload(key, 'text/plain', 10, 8 * 24 * 3600)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('newObjectKey', () => {
  it('builds <institution>/<kind>/<uuidv7>.<ext> keys that pass validation', () => {
    const key = newObjectKey('Inst_42', 'captions', 'VTT');
    expect(key).toMatch(/^inst_42-[0-9a-f]{8}\/captions\/[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.vtt$/);
    expect(isValidKey(key)).toBe(true);
    expect(newObjectKey('Inst_42', 'captions', 'vtt')).not.toBe(key);
    expect(newObjectKey('i', 'files', '.pdf')).toMatch(/^i\/files\/[0-9a-f-]{36}\.pdf$/);
  });

  it('sanitises the institution id so it cannot steer the path', () => {
    expect(newObjectKey('../../etc', 'files', 'txt')).toMatch(/^etc-[0-9a-f]{8}\/files\//);
    expect(newObjectKey('a/b', 'files', 'txt')).toMatch(/^a-b-[0-9a-f]{8}\/files\//);
    expect(() => newObjectKey('../', 'files', 'txt')).toThrow(StorageError);
  });

  it('gives ids that clean to the same text different prefixes (the prefix is bound to the exact id)', () => {
    const prefix = (id: string) => newObjectKey(id, 'uploads', 'txt').split('/')[0];
    expect(prefix('inst_demo')).toBe('inst_demo');
    expect(prefix('INST_DEMO')).toMatch(/^inst_demo-[0-9a-f]{8}$/);
    expect(prefix('Inst_Demo')).not.toBe(prefix('INST_DEMO'));
    expect(prefix('INST_DEMO')).toBe(prefix('INST_DEMO'));
  });

  it('refuses unsafe kinds and extensions', () => {
    for (const ext of ['', 'tar.gz', 'php?', 'toolongext', '../x', 'vtt ']) {
      expect(() => newObjectKey('inst', 'files', ext)).toThrow(StorageError);
    }
    for (const kind of ['', '../x', 'a/b', 'Files', '.hidden']) {
      expect(() => newObjectKey('inst', kind, 'txt')).toThrow(StorageError);
    }
  });
});

describe('createStorage', () => {
  const config = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', AUTH_SECRET: SECRET, PUBLIC_BASE_URL: BASE, ...env });

  it('picks the local driver for file:// URLs, relative to the working directory', () => {
    const s = createStorage(config({ STORAGE_URL: 'file://.data/files' }), clock);
    expect(s).toBeInstanceOf(LocalStorage);
    expect((s as LocalStorage).root).toBe(resolve('.data/files'));
    expect(parseStorageUrl('file:///var/lms/files')).toEqual({ driver: 'file', root: '/var/lms/files' });
    expect(createStorage(config({}), clock).driver).toBe('file');
  });

  it('picks the S3 driver for s3:// URLs, with an optional prefix', async () => {
    const s = createStorage(config({ STORAGE_URL: 's3://lms-files/prod/', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' }), clock);
    // The AWS SDK is loaded on first use.
    expect(s).toBeInstanceOf(LazyS3Storage);
    expect(await (s as LazyS3Storage).load()).toBeInstanceOf(S3Storage);
    expect(parseStorageUrl('s3://lms-files/prod/')).toEqual({ driver: 's3', bucket: 'lms-files', prefix: 'prod' });
    expect(parseStorageUrl('s3://lms-files')).toEqual({ driver: 's3', bucket: 'lms-files', prefix: undefined });
  });

  it('refuses bad settings with a clear message', () => {
    expect(() => parseStorageUrl('s3://x')).toThrow(/bucket/);
    expect(() => parseStorageUrl('s3://lms-files/../up')).toThrow(/prefix/);
    expect(() => parseStorageUrl('file://')).toThrow(/directory/);
    expect(() => createStorage(config({ STORAGE_URL: 's3://lms-files', S3_ACCESS_KEY_ID: 'k' }), clock)).toThrow(/S3_SECRET_ACCESS_KEY/);
  });
});
