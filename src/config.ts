import { createECDH } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * Environment → typed configuration, parsed once at start-up (DESIGN.md §4).
 * Anything malformed stops the process with a message naming the variable.
 */

const DEV_AUTH_SECRET = 'dev-only-auth-secret-change-me-in-production-0123456789';
export const DEV_CRM_API_KEY = 'dev-crm-api-key';
/** The recorder simulator's bearer token and webhook secret under `lms start` (development only). */
export const DEV_RECORDING_API_TOKEN = 'dev-recording-api-token';
export const DEV_RECORDING_WEBHOOK_SECRET = 'dev-recording-webhook-secret';

const optionalUrl = z.string().url().optional();
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** A VAPID key as `lms vapid` (web-push) prints it: unpadded base64url of a raw P-256 key of `bytes` bytes. */
const vapidKey = (bytes: number, what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, `must be the base64url ${what} that \`lms vapid\` prints`)
    .refine((v) => Buffer.from(v, 'base64url').length === bytes, { message: `must decode to ${bytes} bytes (the ${what} that \`lms vapid\` prints)` });

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  DB_POOL_SIZE: positiveInt.default(10),
  DB_STATEMENT_TIMEOUT_MS: positiveInt.default(30_000),
  AUTH_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  SESSION_COOKIE_NAME: z.string().min(1).default('__Secure-authjs.session-token'),
  PUBLIC_BASE_URL: optionalUrl,
  /** The CRM's sign-in page: the web app sends people there when they have no session. */
  AUTH_SIGNIN_URL: z
    .string()
    .url()
    .regex(/^https?:\/\//i, 'must be an http:// or https:// URL')
    .optional(),
  /** The built web app (index.html and assets); default dist/web next to the compiled server, web/dist next to the sources. */
  WEB_DIR: z.string().min(1).optional(),
  CORS_ORIGINS: z
    .string()
    .refine((v) => v.split(',').every((o) => o.trim() === '' || isWebOrigin(o.trim())), {
      message: 'must be a comma-separated list of origins such as https://app.example.org (scheme, host and optional port)',
    })
    .optional(),
  CRM_API_KEY: z.string().min(1).optional(),
  CRM_BASE_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+(:\d+)?$/i, 'must be a domain name, optionally with :port')
    .optional(),
  CRM_PROTOCOL: z.enum(['http', 'https']).optional(),
  CRM_URL: optionalUrl,
  CRM_TIMEOUT_MS: positiveInt.default(5000),
  CRM_CONNECT_TIMEOUT_MS: positiveInt.default(2000),
  CRON_SECRET: z.string().min(1).optional(),
  /** The external recorder's API; with RECORDING_API_TOKEN and RECORDING_WEBHOOK_SECRET recording works (spec 5.4). */
  RECORDING_API_URL: z
    .string()
    .url()
    .regex(/^https?:\/\//i, 'must be an http:// or https:// URL')
    .optional(),
  RECORDING_API_TOKEN: z.string().min(1).optional(),
  RECORDING_WEBHOOK_SECRET: z.string().min(1).optional(),
  /** First part of a room name `<prefix>-<institution slug>-<session id>`. */
  RECORDING_ROOM_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/i, 'must be 1 to 32 letters, digits or hyphens, starting with a letter or digit')
    .default('lms'),
  RECORDING_TIMEOUT_MS: positiveInt.default(10_000),
  /**
   * A recording's LIVE_CLASS_RECORDING_READY goes out in the webhook's own transaction to a course
   * of at most this many ACTIVE or COMPLETED enrollments; a larger fan-out is sent by the worker,
   * so the webhook still answers within 100 ms (issue 12, bench/RESULTS.md).
   */
  RECORDING_READY_INLINE_MAX: z.coerce.number().int().min(0).max(100_000).default(200),
  RECORDING_CONNECT_TIMEOUT_MS: positiveInt.default(3_000),
  SMTP_URL: z
    .string()
    .url()
    .regex(/^smtps?:\/\//i, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().default('LMS <no-reply@lms.localhost>'),
  VAPID_PUBLIC_KEY: vapidKey(65, 'uncompressed P-256 public key').optional(),
  VAPID_PRIVATE_KEY: vapidKey(32, 'P-256 private key').optional(),
  /** The contact the push services see in the VAPID token: a mailto: address or an https: URL. */
  VAPID_SUBJECT: z
    .string()
    .refine((v) => /^mailto:[^\s@]+@[^\s@]+$/.test(v) || /^https:\/\/[^\s/]+/.test(v), { message: 'must be a mailto: address or an https: URL' })
    .default('mailto:admin@lms.localhost'),
  STORAGE_URL: z
    .string()
    .regex(/^(file|s3):\/\//, 'must start with file:// or s3://')
    .optional(),
  S3_ENDPOINT: optionalUrl,
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('true'),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  RATE_LIMIT_READ: positiveInt.default(100),
  RATE_LIMIT_WRITE: positiveInt.default(30),
  /**
   * Requests per IP per window from callers without a session (refused ones included), reads and
   * writes counted apart. Unset: RATE_LIMIT_READ and RATE_LIMIT_WRITE, as for a person (issue 2
   * pins anonymous callers to the spec's limits by IP); raise it for many users behind one NAT.
   */
  RATE_LIMIT_ANONYMOUS: positiveInt.optional(),
  RATE_LIMIT_REPORT_RUN: positiveInt.default(30),
  RATE_LIMIT_REPORT_EXPORT: positiveInt.default(10),
  /** Statement timeout of analytics report queries (PostgreSQL enforces it; see README Analytics). */
  REPORT_STATEMENT_TIMEOUT_MS: positiveInt.default(20_000),
  RATE_LIMIT_WINDOW_MS: positiveInt.default(60_000),
  RATE_LIMIT_DISABLED: z.enum(['true', 'false']).default('false'),
  /** Requests to the xAPI LRS (/api/xapi/*) per credential or person per window, reads and writes counted apart. */
  RATE_LIMIT_XAPI: positiveInt.default(1200),
  /** Calls to the signed recorder webhook per IP per window, apart from other anonymous requests. */
  RATE_LIMIT_WEBHOOK: positiveInt.default(600),
  /** Largest request body of the xAPI LRS (statements with attachments, documents). */
  XAPI_BODY_LIMIT_BYTES: positiveInt.default(20 * 1024 * 1024),
  WORKER_POLL_MS: positiveInt.default(1000),
  WORKER_CONCURRENCY: positiveInt.default(4),
  WORKER_LEASE_MS: positiveInt.min(3000).default(60_000),
  JOB_RETENTION_DAYS: positiveInt.default(7),
  JOB_DEAD_RETENTION_DAYS: positiveInt.default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A response that does not match its schema: `log` it and send it anyway, or fail the request (`strict`, for tests). */
  RESPONSE_VALIDATION: z.enum(['strict', 'log']).default('log'),
  BODY_LIMIT_BYTES: positiveInt.default(1_048_576),
  /** Bytes one person may have uploaded (registered files plus pending presigned uploads). */
  UPLOAD_QUOTA_USER_BYTES: positiveInt.default(1024 ** 3),
  /** Bytes one institution may have uploaded (registered files plus pending presigned uploads). */
  UPLOAD_QUOTA_INSTITUTION_BYTES: positiveInt.default(50 * 1024 ** 3),
  /** Largest SCORM package zip accepted (bytes). */
  SCORM_MAX_PACKAGE_BYTES: positiveInt.default(500 * 1024 * 1024),
  /** Zip safety: the sum of a package's uncompressed sizes, one entry's, the number of entries and one entry's compression ratio. */
  SCORM_MAX_UNCOMPRESSED_BYTES: positiveInt.default(2 * 1024 ** 3),
  SCORM_MAX_ENTRY_BYTES: positiveInt.default(500 * 1024 * 1024),
  SCORM_MAX_ENTRIES: positiveInt.default(10_000),
  SCORM_MAX_COMPRESSION_RATIO: positiveInt.default(100),
  /** How long the content address a SCORM launch hands out stays valid (seconds). */
  SCORM_LAUNCH_TTL_SECONDS: positiveInt.max(7 * 24 * 3600).default(8 * 3600),
  /** Requests per caller per window to SCORM package content (a SCO loads many files). */
  RATE_LIMIT_SCORM_CONTENT: positiveInt.default(1000),
  AUTH_MAX_TOKEN_AGE_SECONDS: positiveInt.default(30 * 24 * 3600),
  TRUST_PROXY: z
    .string()
    .refine((v) => /^(false|\d+)$/.test(v.trim()) || v.split(',').every((p) => isProxyAddress(p.trim())), {
      message: 'must be false, a hop count or a comma-separated list of proxy addresses/CIDRs',
    })
    .optional(),
  REQUEST_TIMEOUT_MS: positiveInt.default(30_000),
  HEADERS_TIMEOUT_MS: positiveInt.default(10_000),
  CONNECTION_TIMEOUT_MS: positiveInt.default(120_000),
  /**
   * On SIGTERM, how long `lms serve` keeps serving with /readyz answering 503 before it stops
   * accepting connections, so a load balancer's health checks take it out first.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(300_000).default(0),
  /**
   * Filtered totals of my notes and my bookmarks (searches, course filters) kept per process,
   * each valid while the student's version is unchanged (src/modules/notes/filtered-totals.ts).
   * 0 counts every time.
   */
  FILTERED_TOTALS_CACHE_SIZE: z.coerce.number().int().min(0).max(10_000_000).default(10_000),
});

export type Env = z.infer<typeof envSchema>;

/** An IP address or CIDR block, as TRUST_PROXY lists them (proxy-addr also knows a few names). */
function isProxyAddress(value: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(value)) return true;
  const [address, bits, ...rest] = value.split('/');
  if (rest.length > 0 || !address || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max;
}

/** TRUST_PROXY as Fastify's `trustProxy` takes it: false, a hop count, or addresses/CIDRs. */
/** `http(s)://host[:port]` (a trailing `/` allowed) and nothing else: what a browser sends as `Origin`. */
function isWebOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  const http = url.protocol === 'http:' || url.protocol === 'https:';
  const bare = !url.username && !url.password && !url.search && !url.hash && url.pathname === '/' && !/^[a-z]+:\/\/[^/]+\/./i.test(value);
  return http && bare;
}

function trustProxyFrom(value: string | undefined): false | number | string[] {
  const v = value?.trim();
  if (!v || v === 'false') return false;
  if (/^\d+$/.test(v)) return Number(v) === 0 ? false : Number(v);
  return v
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

export interface CrmAddressing {
  protocol: 'http' | 'https';
  baseDomain: string;
}

export interface Config extends Omit<Env, 'AUTH_SECRET' | 'CRM_API_KEY' | 'TRUST_PROXY'> {
  AUTH_SECRET: string;
  /** True when AUTH_SECRET is the public development secret (only `lms start` allows it). */
  usingDevSecret: boolean;
  trustProxy: false | number | string[];
  CRM_API_KEY: string | undefined;
  crm: CrmAddressing | undefined;
  isProduction: boolean;
  publicBaseUrl: string;
  storageUrl: string;
  corsOrigins: string[];
}

export class ConfigError extends Error {}

const REQUIRED_IN_PRODUCTION = ['DATABASE_URL', 'AUTH_SECRET', 'CRM_API_KEY'] as const;

/** Split the legacy single-tenant CRM_URL into protocol and base domain (spec 5.3). */
export function crmAddressingFrom(env: Pick<Env, 'CRM_BASE_DOMAIN' | 'CRM_PROTOCOL' | 'CRM_URL'>): CrmAddressing | undefined {
  if (env.CRM_BASE_DOMAIN) {
    return { protocol: env.CRM_PROTOCOL ?? 'https', baseDomain: env.CRM_BASE_DOMAIN.toLowerCase() };
  }
  if (env.CRM_URL) {
    const url = new URL(env.CRM_URL);
    return { protocol: url.protocol === 'http:' ? 'http' : 'https', baseDomain: url.host.toLowerCase() };
  }
  return undefined;
}

/**
 * Which secrets a command needs:
 * - `required`: `lms serve` and `lms worker` refuse to start without AUTH_SECRET, and without
 *   CRM_API_KEY when a real CRM is configured (CRM_BASE_DOMAIN or CRM_URL);
 * - `development`: `lms start`, `lms token`, tests: the public development secret (and the
 *   simulator's key) stand in for unset ones, outside production only.
 */
export type SecretPolicy = 'required' | 'development';

export interface LoadConfigOptions {
  secrets?: SecretPolicy;
  /**
   * The process serves the cron endpoints (`lms serve`, `lms start`): in production it refuses
   * to start without CRON_SECRET, since without one they are open to anyone (spec 5.4 allows
   * that in development only, with a warning).
   */
  servesCron?: boolean;
}

/** Both VAPID keys or neither, and the public key must be the private key's. */
function checkVapidKeys(env: Pick<Env, 'VAPID_PUBLIC_KEY' | 'VAPID_PRIVATE_KEY'>) {
  const { VAPID_PUBLIC_KEY: pub, VAPID_PRIVATE_KEY: priv } = env;
  if (!pub && !priv) return;
  if (!pub || !priv) {
    const missing = pub ? 'VAPID_PRIVATE_KEY' : 'VAPID_PUBLIC_KEY';
    throw new ConfigError(`Invalid configuration:\n  ${missing}: VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are set together or not at all (\`lms vapid\` prints a pair)`);
  }
  let derived: string;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(priv, 'base64url'));
    derived = ecdh.getPublicKey().toString('base64url');
  } catch {
    throw new ConfigError('Invalid configuration:\n  VAPID_PRIVATE_KEY: is not a P-256 private key');
  }
  if (derived !== pub) {
    throw new ConfigError('Invalid configuration:\n  VAPID_PUBLIC_KEY: is not the public key of VAPID_PRIVATE_KEY (`lms vapid` prints a matching pair)');
  }
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env, options: LoadConfigOptions = {}): Config {
  // Empty strings count as unset, as most deploy tools write them.
  const raw = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const env = parsed.data;
  const isProduction = env.NODE_ENV === 'production';
  if (isProduction) {
    const missing = REQUIRED_IN_PRODUCTION.filter((k) => !env[k]);
    if (missing.length > 0) {
      throw new ConfigError(`Refusing to start in production: missing ${missing.join(', ')}`);
    }
  }
  if (isProduction && options.servesCron && !env.CRON_SECRET) {
    throw new ConfigError('Refusing to start in production: missing CRON_SECRET (without it the cron endpoints are open to anyone)');
  }
  const crm = crmAddressingFrom(env);
  if ((options.secrets ?? 'development') === 'required') {
    const missing: string[] = [];
    if (!env.AUTH_SECRET) missing.push('AUTH_SECRET');
    if (crm && !env.CRM_API_KEY) missing.push('CRM_API_KEY');
    if (missing.length > 0) {
      throw new ConfigError(`Refusing to start: missing ${missing.join(', ')} (only \`lms start\`, the development all-in-one, runs with development secrets)`);
    }
  }
  checkVapidKeys(env);
  if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration:\n  HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS');
  }
  return {
    ...env,
    AUTH_SECRET: env.AUTH_SECRET ?? DEV_AUTH_SECRET,
    usingDevSecret: !env.AUTH_SECRET,
    trustProxy: trustProxyFrom(env.TRUST_PROXY),
    CRM_API_KEY: env.CRM_API_KEY ?? (isProduction ? undefined : DEV_CRM_API_KEY),
    crm,
    isProduction,
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://${env.HOST}:${env.PORT}`).replace(/\/$/, ''),
    storageUrl: env.STORAGE_URL ?? `file://${env.DATA_DIR}/files`,
    // As browsers write Origin (lower-case host, no default port, no slash): CORS compares strings.
    corsOrigins: (env.CORS_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((o) => new URL(o).origin),
  };
}
