import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { routeRateLimits } from '../../src/platform/http/rate-limit.js';
import { loadConfig } from '../../src/config.js';
import { newId } from '../../src/platform/ids.js';
import { hmacSha256Hex } from '../../src/platform/auth/signatures.js';

// Redis counters outlive a run: ids are unique per run.
const run = newId().slice(-8);

function suite(name: string, env: Record<string, string>) {
  describe(name, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({
        env: {
          RATE_LIMIT_READ: '5',
          RATE_LIMIT_WRITE: '3',
          RATE_LIMIT_ANONYMOUS: '7',
          RATE_LIMIT_REPORT_RUN: '2',
          CRON_SECRET: 'rate-limit-cron-secret',
          TRUST_PROXY: '127.0.0.1',
          ...env,
        },
        extraRoutes: (app) => {
          const typed = app.withTypeProvider<ZodTypeProvider>();
          typed.get('/api/test/read', async () => ({ data: 1, error: null }));
          typed.post('/api/test/write', async () => ({ data: 1, error: null }));
          typed.post('/api/test/report', { config: { rateLimit: routeRateLimits(loadConfig({ RATE_LIMIT_REPORT_RUN: '2' })).reportRun } }, async () => ({ data: 1, error: null }));
        },
      });
    });
    afterAll(() => t.close());

    it('limits reads per person and answers 429 RATE_LIMITED with headers', async () => {
      const token = await t.token({ role: 'STUDENT', id: `c_rl_${run}_${name}_1` });
      for (let i = 0; i < 5; i++) {
        const ok = await t.request('GET', '/api/test/read', { token });
        expect(ok.status).toBe(200);
        expect(ok.headers['ratelimit-limit']).toBe('5');
        expect(ok.headers['ratelimit-remaining']).toBe(String(4 - i));
      }
      const res = await t.request('GET', '/api/test/read', { token });
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ data: null, error: { code: 'RATE_LIMITED' } });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe('0');
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      // Another person has their own budget.
      const other = await t.token({ role: 'STUDENT', id: `c_rl_${run}_${name}_2` });
      expect((await t.request('GET', '/api/test/read', { token: other })).status).toBe(200);
    });

    it('counts writes separately with the lower write limit', async () => {
      const token = await t.token({ role: 'TEACHER', id: `u_rl_${run}_${name}_3` });
      for (let i = 0; i < 3; i++) expect((await t.request('POST', '/api/test/write', { token, body: {} })).status).toBe(200);
      expect((await t.request('POST', '/api/test/write', { token, body: {} })).status).toBe(429);
      expect((await t.request('GET', '/api/test/read', { token })).status).toBe(200);
    });

    it('applies a per-route override', async () => {
      const token = await t.token({ role: 'ADMIN', id: `u_rl_${run}_${name}_4` });
      for (let i = 0; i < 2; i++) expect((await t.request('POST', '/api/test/report', { token, body: {} })).status).toBe(200);
      const res = await t.request('POST', '/api/test/report', { token, body: {} });
      expect(res.status).toBe(429);
      expect(res.headers['ratelimit-limit']).toBe('2');
    });

    it('limits anonymous callers by IP, with a budget of their own (RATE_LIMIT_ANONYMOUS, not the per-user read limit)', async () => {
      const headers = { 'x-forwarded-for': `10.${name.length}.${parseInt(run.slice(-2), 16)}.${parseInt(run.slice(-4, -2), 16)}` };
      const answers = [];
      for (let i = 0; i < 8; i++) answers.push(await t.request('GET', '/api/auth/session', { headers }));
      expect(answers.slice(0, 7).map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
      expect(answers[0]!.headers['ratelimit-limit']).toBe('7');
      expect(answers[7]!.status).toBe(429);
    });

    it('the cron scheduler and the recorder webhook are not refused when their address used up the anonymous budget', async () => {
      const headers = { 'x-forwarded-for': `10.${name.length + 100}.${parseInt(run.slice(-2), 16)}.${parseInt(run.slice(-4, -2), 16)}` };
      // Refused writes and reads without a session use up this address's anonymous budgets.
      for (let i = 0; i < 7; i++) expect((await t.request('POST', '/api/test/write', { headers, body: {} })).status).toBe(401);
      expect((await t.request('POST', '/api/test/write', { headers, body: {} })).status).toBe(429);
      for (let i = 0; i < 7; i++) expect((await t.request('GET', '/api/test/read', { headers })).status).toBe(401);
      expect((await t.request('GET', '/api/test/read', { headers })).status).toBe(429);
      // A cron call with the secret counts as the scheduler; a wrong secret is still anonymous.
      const cron = (secret: string) => t.request('GET', '/api/cron/assignment-reminders', { headers: { ...headers, authorization: `Bearer ${secret}` } });
      expect((await cron('rate-limit-cron-secret')).status).toBe(200);
      expect((await cron('wrong')).status).toBe(429);
      // The recorder's webhook has its own per-IP group (an unknown session: 200 ignored).
      const body = JSON.stringify({ event: 'recording_failed', sessionId: `no-such-${run}`, roomName: 'lms-x' });
      const signed = await t.app.inject({
        method: 'POST',
        url: '/api/webhooks/meet-recording',
        headers: { ...headers, 'content-type': 'application/json', 'x-recorder-signature': hmacSha256Hex(t.config.RECORDING_WEBHOOK_SECRET!, body) },
        payload: body,
      });
      expect(signed.statusCode, signed.body).toBe(200);
      expect(signed.json().data).toMatchObject({ ignored: true, reason: 'unknown_session' });
    });
  });
}

suite('memory', {});
describe.runIf(Boolean(process.env.REDIS_URL))('with REDIS_URL', () => {
  suite('redis', { REDIS_URL: process.env.REDIS_URL ?? '' });
});
