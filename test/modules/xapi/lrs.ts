/**
 * Helpers of the xAPI LRS tests: a credential issued through the API, requests with the
 * xAPI version header, agents and statements.
 */
import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { DEMO_ADMIN_ID, DEMO_INSTITUTION } from '../../../src/dev/crm-sim/fixtures.js';

export const VERSION = { 'x-experience-api-version': '1.0.3' };

export interface LrsResponse {
  status: number;
  headers: Record<string, any>;
  body: any;
  raw: string;
  rawPayload: Buffer;
}

export interface Credential {
  id: string;
  key: string;
  secret: string;
  authorization: string;
}

/** Issues a credential through POST /api/xapi/credentials as the institution's ADMIN. */
export async function issueCredential(t: TestApp, opts: { institutionId?: string; adminId?: string; name?: string } = {}): Promise<Credential> {
  const admin = await t.token({ role: 'ADMIN', id: opts.adminId ?? DEMO_ADMIN_ID, institutionId: opts.institutionId ?? DEMO_INSTITUTION.id });
  const res = await t.request('POST', '/api/xapi/credentials', { token: admin, body: { name: opts.name ?? 'Test content tool' } });
  expect(res.status, res.raw).toBe(201);
  const { id, key, secret } = res.body.data;
  return { id, key, secret, authorization: `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}` };
}

export interface LrsCall {
  auth?: string | null;
  query?: Record<string, string>;
  body?: unknown;
  /** Raw payload (a Buffer or text), sent as given. */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  /** Leave out X-Experience-API-Version. */
  noVersion?: boolean;
}

/** One request to the LRS (`path` under /api/xapi/). */
export async function lrs(t: TestApp, method: string, path: string, call: LrsCall = {}): Promise<LrsResponse> {
  const headers: Record<string, string> = { ...(call.noVersion ? {} : VERSION), ...call.headers };
  if (call.auth) headers.authorization = call.auth;
  let payload: string | Buffer | undefined = call.payload;
  if (call.body !== undefined) {
    payload = JSON.stringify(call.body);
    headers['content-type'] ??= 'application/json';
  }
  const qs = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
  const res = await t.app.inject({ method: method as never, url: `/api/xapi/${path}${qs}`, headers, ...(payload !== undefined ? { payload } : {}) });
  let body: any;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body, raw: res.body, rawPayload: res.rawPayload };
}

/** The answer is an LRS error: this status, a plain-text message, the version header, no envelope. */
export function expectLrsError(res: LrsResponse, status: number, message?: RegExp) {
  expect(res.status, res.raw).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
  expect(res.headers['x-experience-api-version']).toBe('1.0.3');
  expect(res.raw.length).toBeGreaterThan(0);
  expect(res.raw).not.toContain('"error"');
  if (message) expect(res.raw).toMatch(message);
}

export const mbox = (name: string) => ({ objectType: 'Agent', mbox: `mailto:${name}@example.org`, name });
export const activityId = (name: string) => `http://example.org/activities/${name}`;
export const verb = (name: string) => ({ id: `http://adlnet.gov/expapi/verbs/${name}`, display: { 'en-US': name } });

/** A minimal valid statement; `extra` overrides any property. */
export function statement(extra: Record<string, unknown> = {}) {
  return {
    actor: mbox('alice'),
    verb: verb('experienced'),
    object: { objectType: 'Activity', id: activityId('a1'), definition: { name: { 'en-US': 'Activity one' } } },
    ...extra,
  };
}

export const uuid = () => randomUUID();
export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Stores statements and returns their ids. */
export async function post(t: TestApp, auth: string, statements: unknown): Promise<string[]> {
  const res = await lrs(t, 'POST', 'statements', { auth, body: statements });
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

/** A multipart/mixed body: the statements JSON, then each attachment part. */
export function mixed(
  json: unknown,
  parts: Array<{ data: string | Buffer; contentType?: string; hash?: string; noEncoding?: boolean; noHash?: boolean }>,
  boundary = `b${randomUUID()}`,
) {
  const chunks: Buffer[] = [Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(json)}\r\n`)];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Type: ${p.contentType ?? 'text/plain'}\r\n`;
    if (!p.noEncoding) head += 'Content-Transfer-Encoding: binary\r\n';
    if (!p.noHash) head += `X-Experience-API-Hash: ${p.hash ?? sha256(p.data)}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/mixed; boundary=${boundary}` } };
}
