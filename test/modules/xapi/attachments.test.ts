/**
 * Attachments (xAPI 1.0.3 Data 2.4.11, Communication 1.5.2) and signed statements (Data 2.6):
 * multipart/mixed requests with SHA-2 checked parts, attachments stored through the storage
 * module and returned with attachments=true, and JWS signatures checked for shape, algorithm,
 * payload and (with an x5c certificate) the signature itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { CompactSign, generateKeyPair, importPKCS8 } from 'jose';
import { parseMultipart } from '@remix-run/multipart-parser';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { rawRows } from '../../../src/platform/db/client.js';
import { expectLrsError, issueCredential, lrs, mixed, sha256, statement, uuid, type Credential } from './lrs.js';

let t: TestApp;
let cred: Credential;

beforeAll(async () => {
  t = await createTestApp();
  cred = await issueCredential(t);
});
afterAll(async () => t.close());

const TEXT = 'here is a simple attachment\r\nwith two lines';
const attachmentMeta = (data: string | Buffer, extra: Record<string, unknown> = {}) => ({
  usageType: 'http://example.com/attachment-usage/test',
  display: { 'en-US': 'A test attachment' },
  contentType: 'text/plain; charset=ascii',
  length: Buffer.byteLength(data),
  sha2: sha256(data),
  ...extra,
});

const postMixed = (body: { payload: Buffer; headers: Record<string, string> }, method = 'POST', query?: Record<string, string>) =>
  lrs(t, method, 'statements', { auth: cred.authorization, payload: body.payload, headers: body.headers, query });

describe('multipart/mixed statements with attachments', () => {
  it('stores the statement and the attachment (in storage, by hash) and returns both with attachments=true', async () => {
    const id = uuid();
    const res = await postMixed(mixed(statement({ id, attachments: [attachmentMeta(TEXT)] }), [{ data: TEXT }]));
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual([id]);
    const [row] = await rawRows<{ storage_key: string; length: number }>(t.db, sql`select storage_key, length from xapi_attachments where sha2 = ${sha256(TEXT)}`);
    expect(row!.length).toBe(Buffer.byteLength(TEXT));
    expect((await t.deps.storage.get(row!.storage_key)).toString()).toBe(TEXT);

    const got = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { statementId: id, attachments: 'true' } });
    expect(got.status).toBe(200);
    const type = String(got.headers['content-type']);
    expect(type).toMatch(/^multipart\/mixed; boundary=/);
    const parts = [...parseMultipart(got.rawPayload, { boundary: type.split('boundary=')[1]! })];
    expect(parts).toHaveLength(2);
    expect(JSON.parse(Buffer.from(parts[0]!.bytes).toString()).id).toBe(id);
    expect(parts[1]!.headers['x-experience-api-hash']).toBe(sha256(TEXT));
    expect(parts[1]!.headers['content-transfer-encoding']).toBe('binary');
    expect(Buffer.from(parts[1]!.bytes).toString()).toBe(TEXT);

    // the query form too, and without attachments=true plain JSON
    const list = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { verb: 'http://adlnet.gov/expapi/verbs/experienced', attachments: 'true', limit: '1' } });
    expect(String(list.headers['content-type'])).toMatch(/^multipart\/mixed/);
    const plain = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { statementId: id } });
    expect(plain.body.attachments[0].sha2).toBe(sha256(TEXT));
  });

  it('PUT takes multipart/mixed too; binary content round-trips', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 254, 13, 10, 45, 45]);
    const id = uuid();
    const res = await postMixed(
      mixed(statement({ attachments: [attachmentMeta(bytes, { contentType: 'application/octet-stream' })] }), [{ data: bytes, contentType: 'application/octet-stream' }]),
      'PUT',
      {
        statementId: id,
      },
    );
    expect(res.status, res.raw).toBe(204);
    const got = await lrs(t, 'GET', 'statements', { auth: cred.authorization, query: { statementId: id, attachments: 'true' } });
    const parts = [...parseMultipart(got.rawPayload, { boundary: String(got.headers['content-type']).split('boundary=')[1]! })];
    expect(Buffer.from(parts[1]!.bytes).equals(bytes)).toBe(true);
  });

  it('an attachment with fileUrl needs no part; one already stored needs none either', async () => {
    const withUrl = await lrs(t, 'POST', 'statements', {
      auth: cred.authorization,
      body: statement({ attachments: [attachmentMeta('elsewhere', { fileUrl: 'http://example.com/file.txt' })] }),
    });
    expect(withUrl.status, withUrl.raw).toBe(200);
    // TEXT was stored by the first test
    const again = await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: statement({ attachments: [attachmentMeta(TEXT)] }) });
    expect(again.status, again.raw).toBe(200);
  });

  it('refuses with 400: missing part, extra part, wrong hash, missing hash or encoding header, no JSON first part, no boundary, garbage', async () => {
    const other = `other ${uuid()}`;
    expectLrsError(await lrs(t, 'POST', 'statements', { auth: cred.authorization, body: statement({ attachments: [attachmentMeta(other)] }) }), 400, /missing/);
    expectLrsError(await postMixed(mixed(statement({ attachments: [attachmentMeta(other)] }), [])), 400, /missing/);
    expectLrsError(await postMixed(mixed(statement(), [{ data: other }])), 400, /belongs to no attachment/);
    expectLrsError(await postMixed(mixed(statement({ attachments: [attachmentMeta(other)] }), [{ data: other, hash: sha256('something else') }])), 400);
    expectLrsError(await postMixed(mixed(statement({ attachments: [attachmentMeta(other)] }), [{ data: `${other}!`, hash: sha256(other) }])), 400, /does not have that SHA-2/);
    expectLrsError(await postMixed(mixed(statement({ attachments: [attachmentMeta(other)] }), [{ data: other, noHash: true }])), 400, /X-Experience-API-Hash/);
    expectLrsError(await postMixed(mixed(statement({ attachments: [attachmentMeta(other)] }), [{ data: other, noEncoding: true }])), 400, /Content-Transfer-Encoding/);
    const good = mixed(statement({ attachments: [attachmentMeta(other)] }), [{ data: other }]);
    expectLrsError(await postMixed({ payload: good.payload, headers: { 'content-type': 'multipart/mixed' } }), 400);
    expectLrsError(await postMixed({ payload: good.payload.subarray(0, good.payload.length - 10), headers: good.headers }), 400);
    expectLrsError(await postMixed({ payload: Buffer.from('garbage'), headers: good.headers }), 400);
    const textFirst = Buffer.from(good.payload.toString('latin1').replace('Content-Type: application/json', 'Content-Type: text/plain'), 'latin1');
    expectLrsError(await postMixed({ payload: textFirst, headers: good.headers }), 400, /first part/);
    const [{ n }] = await rawRows<{ n: number }>(t.db, sql`select count(*)::int as n from xapi_attachments where sha2 = ${sha256(other)}`);
    expect(n).toBe(0);
  });
});

describe('signed statements', () => {
  let privateKey: CryptoKey;
  beforeAll(async () => {
    ({ privateKey } = await generateKeyPair('RS256', { extractable: true }));
  });

  const sign = async (payload: unknown, alg = 'RS256', key: CryptoKey | Uint8Array = privateKey, header: Record<string, unknown> = {}) =>
    new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg, ...header }).sign(key);

  const signedRequest = (original: Record<string, unknown>, jws: string, extra: Record<string, unknown> = {}) =>
    mixed({ ...original, attachments: [attachmentMeta(jws, { usageType: 'http://adlnet.gov/expapi/attachments/signature', contentType: 'application/octet-stream', ...extra })] }, [
      { data: jws, contentType: 'application/octet-stream' },
    ]);

  it('accepts a statement whose JWS payload is the statement (RS256)', async () => {
    const original = statement({ id: uuid() });
    const res = await postMixed(signedRequest(original, await sign(original)));
    expect(res.status, res.raw).toBe(200);
  });

  it('refuses a payload that differs, another algorithm, a malformed JWS, a wrong content type', async () => {
    const original = statement({ id: uuid() });
    expectLrsError(await postMixed(signedRequest(original, await sign({ ...original, verb: { id: 'http://example.org/other' } }))), 400, /does not match/);
    expectLrsError(await postMixed(signedRequest(original, await sign(original, 'HS256', new Uint8Array(32).fill(7)))), 400, /RS256/);
    expectLrsError(await postMixed(signedRequest(original, 'not.a.jws!')), 400, /compact/);
    expectLrsError(await postMixed(signedRequest(original, await sign(original), { contentType: 'text/plain' })), 400, /octet-stream/);
  });

  it.skipIf(!hasOpenssl())('verifies the signature with the key of an x5c certificate', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xapi-x5c-'));
    try {
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2', '-subj', '/CN=xapi-test'],
        { stdio: 'ignore' },
      );
      const certDer = readFileSync(join(dir, 'cert.pem'), 'utf8').replace(/-----[^-]+-----|\s/g, '');
      const key = await importPKCS8(readFileSync(join(dir, 'key.pem'), 'utf8'), 'RS256');
      const original = statement({ id: uuid() });
      const good = await sign(original, 'RS256', key, { x5c: [certDer] });
      expect((await postMixed(signedRequest(original, good))).status).toBe(200);
      // signed by another key than the certificate's
      const other = statement({ id: uuid() });
      const forged = await sign(other, 'RS256', privateKey, { x5c: [certDer] });
      expectLrsError(await postMixed(signedRequest(other, forged)), 400, /does not verify/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
