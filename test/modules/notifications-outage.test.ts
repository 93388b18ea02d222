/**
 * A PostgreSQL outage in the middle of a delivery batch (what a restart of PostgreSQL does to
 * a worker): the database goes away right after an e-mail was accepted by the SMTP server. The
 * worker waits for the database to record it SENT, finishes the batch and the job on the same
 * attempt, and sends nothing twice. The worker reaches PostgreSQL through a TCP proxy the test
 * cuts (every connection reset, new ones refused) and restores. Needs PostgreSQL.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/platform/bootstrap.js';
import { openDatabase, rawRows, type Database } from '../../src/platform/db/client.js';
import { systemClock } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { startCrmSim, type CrmSim } from '../../src/dev/crm-sim/server.js';
import { notify } from '../../src/modules/notifications/notify.js';
import { createWorker } from '../../src/worker/worker.js';
import type { Worker } from '../../src/platform/queue/queue.js';
import { PG_TEMPLATE_DB, usingPostgres, withDatabase } from '../helpers/database.js';
import { RecordingMailer } from '../helpers/mail.js';
import { silentLog } from '../helpers/app.js';

const STUDENTS = Array.from({ length: 6 }, (_, i) => `c_demo_stu_${String(i + 1).padStart(2, '0')}`);

/** A TCP proxy to PostgreSQL that can be cut: every connection reset and new ones refused, for a while. */
async function pgProxy(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => (s === client ? upstream : client).destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    /** Resets every connection and refuses new ones for `ms`. */
    cut(ms: number) {
      server.close();
      for (const s of sockets) s.destroy();
      setTimeout(() => void listen(), ms);
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe.skipIf(!usingPostgres())('a PostgreSQL outage right after an e-mail was sent', () => {
  const baseUrl = process.env.DATABASE_URL!;
  const dbName = `lms_test_outage_${newId().replace(/-/g, '')}`;
  let direct: Database;
  let through: Database;
  let proxy: Awaited<ReturnType<typeof pgProxy>>;
  let crmSim: CrmSim;
  let worker: Worker;
  const mailer = new RecordingMailer();

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`create database ${dbName} template ${PG_TEMPLATE_DB}`);
    await admin.end();
    const url = new URL(withDatabase(baseUrl, dbName));
    direct = await openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
    proxy = await pgProxy(url);
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    through = await openDatabase({ databaseUrl: proxied.toString(), poolSize: 2 });
    crmSim = await startCrmSim({ port: 0 });
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      AUTH_SECRET: 'outage-test-secret-0123456789abcdef',
      CRM_BASE_DOMAIN: crmSim.baseDomain,
      CRM_PROTOCOL: crmSim.protocol,
      CRM_API_KEY: crmSim.apiKey,
      PUBLIC_BASE_URL: 'http://lms.test',
      WORKER_LEASE_MS: '3000',
    });
    const deps = await createDeps(config, { database: through, mailer, log: silentLog });
    worker = createWorker(deps, { pollMs: 50 });
  });

  afterAll(async () => {
    await through?.close();
    await direct?.close();
    await proxy?.close();
    await crmSim?.close();
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  });

  it('records the e-mail once the database is back, on the same attempt, and sends nothing twice', async () => {
    await notify(
      { db: direct.db, clock: systemClock, config: { publicBaseUrl: 'http://lms.test' } },
      { institutionId: 'inst_demo', key: 'ENROLL_WELCOME', recipients: STUDENTS, metadata: { courseTitle: 'Biology' } },
    );
    // The database goes away for 1.5 s right after the SMTP server accepted the third e-mail.
    const send = mailer.send.bind(mailer);
    mailer.send = async (msg) => {
      const result = await send(msg);
      if (mailer.sent.length === 3) proxy.cut(1500);
      return result;
    };

    const sentRows = async () => (await rawRows<{ n: number }>(direct.db, sql`select count(*)::int as n from notifications where channel = 'email' and status = 'SENT'`))[0].n;
    const deadline = Date.now() + 30_000;
    while ((await sentRows()) < STUDENTS.length) {
      if (Date.now() > deadline) throw new Error('the e-mails were not all recorded SENT');
      await worker.runOnce().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 50));
    }

    const ids = mailer.sent.map((m) => m.messageId);
    expect(ids).toHaveLength(STUDENTS.length);
    const rows = await rawRows<{ id: string }>(direct.db, sql`select id from notifications where channel = 'email'`);
    expect(new Set(ids)).toEqual(new Set(rows.map((r) => `<${r.id}@lms>`)));
    const [job] = await rawRows<{ status: string; attempts: number }>(direct.db, sql`select status, attempts from jobs where name = 'notifications.deliver'`);
    expect(job).toEqual({ status: 'done', attempts: 1 });
  });
});
