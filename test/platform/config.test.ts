import { describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('config', () => {
  it('runs on embedded defaults in development', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.HOST).toBe('127.0.0.1');
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.storageUrl).toBe('file://.data/files');
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:3000');
    expect(c.AUTH_SECRET.length).toBeGreaterThan(16);
  });

  it('refuses production without DATABASE_URL, AUTH_SECRET and CRM_API_KEY, naming them', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/DATABASE_URL, AUTH_SECRET, CRM_API_KEY/);
    expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y', AUTH_SECRET: 'a'.repeat(32) })).toThrow(/missing CRM_API_KEY/);
    const ok = loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y', AUTH_SECRET: 'a'.repeat(32), CRM_API_KEY: 'k' });
    expect(ok.isProduction).toBe(true);
  });

  it('in production, a process serving the cron endpoints needs CRON_SECRET; the worker does not', () => {
    const prod = { NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y', AUTH_SECRET: 'a'.repeat(32), CRM_API_KEY: 'k' };
    expect(() => loadConfig(prod, { secrets: 'required', servesCron: true })).toThrow(/Refusing to start in production: missing CRON_SECRET/);
    expect(loadConfig({ ...prod, CRON_SECRET: 'c' }, { secrets: 'required', servesCron: true }).CRON_SECRET).toBe('c');
    expect(loadConfig(prod, { secrets: 'required' }).CRON_SECRET).toBeUndefined();
    // Development (`npm start`): open, with a warning at start-up.
    expect(loadConfig({}, { secrets: 'development', servesCron: true }).CRON_SECRET).toBeUndefined();
  });

  it('names a malformed variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ CRM_URL: 'not a url' })).toThrow(/CRM_URL/);
    expect(() => loadConfig({ RATE_LIMIT_WRITE: '-3' })).toThrow(/RATE_LIMIT_WRITE/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('validates responses leniently by default; strict is a config value', () => {
    expect(loadConfig({}).RESPONSE_VALIDATION).toBe('log');
    expect(loadConfig({ RESPONSE_VALIDATION: 'strict' }).RESPONSE_VALIDATION).toBe('strict');
    expect(() => loadConfig({ RESPONSE_VALIDATION: 'loud' })).toThrow(/RESPONSE_VALIDATION/);
  });

  it('splits the legacy CRM_URL into protocol and base domain', () => {
    expect(loadConfig({ CRM_URL: 'http://crm.example.test:8080/' }).crm).toEqual({ protocol: 'http', baseDomain: 'crm.example.test:8080' });
    expect(loadConfig({ CRM_BASE_DOMAIN: 'crm.example.edu' }).crm).toEqual({ protocol: 'https', baseDomain: 'crm.example.edu' });
  });

  it('reads TRUST_PROXY as off, a hop count or a list of proxy addresses/CIDRs', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
  });

  it('reads CORS_ORIGINS as origins (written as browsers send them) and stops on anything else', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://App.Example.org, http://localhost:5173/,https://x.org:443' }).corsOrigins).toEqual([
      'https://app.example.org',
      'http://localhost:5173',
      'https://x.org',
    ]);
    for (const bad of ['notanorigin', 'ftp://x.org', 'https://x.org/path', 'https://x.org?q=1', 'https://u:p@x.org', '*']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
  });

  it('needs HEADERS_TIMEOUT_MS within REQUEST_TIMEOUT_MS', () => {
    expect(loadConfig({}).REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '6000' })).toThrow(/HEADERS_TIMEOUT_MS/);
  });

  it("with the 'required' secret policy, names a missing AUTH_SECRET and (with a real CRM) CRM_API_KEY", () => {
    expect(() => loadConfig({}, { secrets: 'required' })).toThrow(/missing AUTH_SECRET/);
    expect(() => loadConfig({ AUTH_SECRET: 'x'.repeat(32), CRM_URL: 'https://crm.example.edu' }, { secrets: 'required' })).toThrow(/missing CRM_API_KEY/);
    expect(loadConfig({ AUTH_SECRET: 'x'.repeat(32) }, { secrets: 'required' }).usingDevSecret).toBe(false);
    expect(loadConfig({}).usingDevSecret).toBe(true);
  });
  it('takes both VAPID keys or neither, a matching pair, and a mailto:/https: subject', () => {
    const pair = webpush.generateVAPIDKeys();
    const other = webpush.generateVAPIDKeys();
    const c = loadConfig({ VAPID_PUBLIC_KEY: pair.publicKey, VAPID_PRIVATE_KEY: pair.privateKey, VAPID_SUBJECT: 'https://lms.example.edu/contact' });
    expect(c).toMatchObject({ VAPID_PUBLIC_KEY: pair.publicKey, VAPID_PRIVATE_KEY: pair.privateKey, VAPID_SUBJECT: 'https://lms.example.edu/contact' });
    const none = loadConfig({ VAPID_PUBLIC_KEY: '', VAPID_PRIVATE_KEY: '' });
    expect([none.VAPID_PUBLIC_KEY, none.VAPID_PRIVATE_KEY, none.VAPID_SUBJECT]).toEqual([undefined, undefined, 'mailto:admin@lms.localhost']);
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: pair.publicKey })).toThrow(/VAPID_PRIVATE_KEY: VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are set together/);
    expect(() => loadConfig({ VAPID_PRIVATE_KEY: pair.privateKey })).toThrow(/VAPID_PUBLIC_KEY: .*set together/);
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: other.publicKey, VAPID_PRIVATE_KEY: pair.privateKey })).toThrow(/VAPID_PUBLIC_KEY: is not the public key of VAPID_PRIVATE_KEY/);
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: 'abc', VAPID_PRIVATE_KEY: pair.privateKey })).toThrow(/VAPID_PUBLIC_KEY: must decode to 65 bytes/);
    expect(() => loadConfig({ VAPID_PUBLIC_KEY: pair.publicKey, VAPID_PRIVATE_KEY: `${pair.privateKey}==` })).toThrow(/VAPID_PRIVATE_KEY/);
    for (const subject of ['admin@lms.example.edu', 'http://lms.example.edu', 'mailto:', 'https://']) {
      expect(() => loadConfig({ VAPID_SUBJECT: subject }), subject).toThrow(/VAPID_SUBJECT: must be a mailto: address or an https: URL/);
    }
  });

  it('takes an smtp:// or smtps:// SMTP_URL', () => {
    expect(loadConfig({ SMTP_URL: 'smtps://user:pass@mail.example.edu:465' }).SMTP_URL).toBe('smtps://user:pass@mail.example.edu:465');
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example.edu' })).toThrow(/SMTP_URL: must be an smtp:\/\/ or smtps:\/\/ URL/);
  });
});
