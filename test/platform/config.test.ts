import { describe, expect, it } from 'vitest';
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
});
