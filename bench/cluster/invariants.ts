/**
 * What must hold once the load has stopped and the workers have finished: every write that was
 * answered 2xx exists exactly once (and none that was not exists twice), every notification
 * row is final and every e-mail reached the SMTP sink exactly once, no job runs without a live
 * lease, rate limits are shared, and every fault was recovered from within a bounded time.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import type pg from 'pg';
import type { FaultEvent, RateLimitCheck, ReadyzSample } from './faults.js';
import type { RequestRecord, Write } from './workload.js';
import { sleep } from './procs.js';

export interface Invariant {
  name: string;
  pass: boolean;
  /** Counts and examples, for the report. */
  detail: string;
}

/** How soon after a fault's component is back error responses must stop. */
export const RECOVERY_BOUND_MS = 10_000;
/** The documented at-least-once window: an e-mail accepted by SMTP this long before its worker was SIGKILLed may be sent again. */
export const KILL_RESEND_WINDOW_MS = 2000;

export const isFailure = (r: RequestRecord) => r.status === 0 || r.status >= 500;
export const isUnexpected4xx = (r: RequestRecord) => r.status >= 400 && r.status < 500 && !r.accepted;

/** Waits until no notification is PENDING, no job is due or running and every stopped recording is final. */
export async function quiesce(db: pg.Pool, timeoutMs: number, log: (line: string) => void): Promise<{ ms: number; settled: boolean }> {
  const started = Date.now();
  let last = '';
  for (;;) {
    const { rows } = await db.query<{ pending: number; jobs: number; recordings: number }>(`
      select
        (select count(*)::int from notifications where status = 'PENDING' and digest_due_at is null) as pending,
        (select count(*)::int from jobs where status in ('queued', 'running') and coalesce(singleton_key, '') not like 'schedule:%'
           and run_at <= now() + interval '10 minutes') as jobs,
        (select count(*)::int from live_sessions where recording_status in ('PENDING', 'RECORDING', 'PROCESSING')) as recordings`);
    const r = rows[0];
    const state = `${r.pending} notifications pending, ${r.jobs} jobs queued or running, ${r.recordings} recordings not final`;
    if (r.pending === 0 && r.jobs === 0 && r.recordings === 0) return { ms: Date.now() - started, settled: true };
    if (Date.now() - started > timeoutMs) {
      log(`not settled after ${timeoutMs / 1000} s: ${state}`);
      return { ms: Date.now() - started, settled: false };
    }
    if (state !== last && (Date.now() - started) % 5000 < 1000) log(`waiting: ${state}`);
    last = state;
    await sleep(1000);
  }
}

interface SinkMessage {
  messageId: string;
  receivedAt: number;
}

/** Every message the SMTP sink stored: its Message-ID and when it arrived (the file name's UTC timestamp, ms). */
export async function readMailbox(dir: string): Promise<SinkMessage[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.eml'));
  const out: SinkMessage[] = [];
  const queue = [...files];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let f = queue.pop(); f !== undefined; f = queue.pop()) {
        const mail = await simpleParser(await readFile(join(dir, f)), { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true });
        const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-/.exec(f);
        const receivedAt = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]) : 0;
        out.push({ messageId: mail.messageId ?? `(none: ${f})`, receivedAt });
      }
    }),
  );
  return out;
}

const writesOf = <K extends Write['kind']>(records: RequestRecord[], kind: K, ok: boolean) =>
  records.filter((r) => r.write?.kind === kind && (r.status >= 200 && r.status <= 299) === ok).map((r) => r.write as Extract<Write, { kind: K }>);

async function counts(db: pg.Pool, sql: string, params: unknown[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ k: string; n: number }>(sql, params);
  return new Map(rows.map((r) => [r.k, Number(r.n)]));
}

function summarize(bad: string[], total: number, what: string): { pass: boolean; detail: string } {
  return { pass: bad.length === 0, detail: `${total - bad.length}/${total} ${what}${bad.length ? `; ${bad.length} wrong, e.g. ${bad.slice(0, 3).join('; ')}` : ''}` };
}

export interface InvariantInput {
  db: pg.Pool;
  records: RequestRecord[];
  faults: FaultEvent[];
  readyz: ReadyzSample[];
  rateLimitChecks: RateLimitCheck[];
  mailDir: string;
  /** Wall-clock time (ms since epoch) of the load's t = 0, to place the sink's receipts on the same axis. */
  loadStartedAt: number;
  bigCourseId: string;
  fanout: number;
  settled: boolean;
  steadyEnd: number;
}

export async function checkInvariants(input: InvariantInput): Promise<{ invariants: Invariant[]; stats: Record<string, number> }> {
  const { db, records } = input;
  const inv: Invariant[] = [];
  const stats: Record<string, number> = {};
  const add = (name: string, r: { pass: boolean; detail: string }) => inv.push({ name, ...r });

  add('the cluster settled (no notification pending, no job due, every recording final)', { pass: input.settled, detail: input.settled ? 'yes' : 'timed out' });

  // ── 1. every write answered 2xx exists exactly once; none exists twice ────────────────────
  {
    const bad: string[] = [];
    let total = 0;
    const enrollments = writesOf(records, 'enrollment', true).filter((w) => w.id);
    total += enrollments.length;
    const byId = await counts(db, `select id as k, count(*) as n from enrollments where id = any($1) group by id`, [enrollments.map((e) => e.id)]);
    const byPair = await counts(db, `select course_id || '/' || student_id as k, count(*) as n from enrollments where institution_id = 'inst_demo' group by 1`, []);
    for (const e of enrollments) {
      if (byId.get(e.id!) !== 1) bad.push(`enrollment ${e.id} found ${byId.get(e.id!) ?? 0}×`);
      if (byPair.get(`${e.courseId}/${e.studentId}`) !== 1) bad.push(`enrollment of ${e.studentId} in ${e.courseId} found ${byPair.get(`${e.courseId}/${e.studentId}`) ?? 0}×`);
    }

    const progress = writesOf(records, 'progress', true);
    total += progress.length;
    const prog = new Map(
      (
        await db.query<{ k: string; n: number; completed: boolean }>(
          `select lesson_id || '/' || student_id as k, count(*)::int as n, bool_or(completed) as completed from lesson_progress group by 1`,
        )
      ).rows.map((r) => [r.k, r]),
    );
    for (const p of progress) {
      const row = prog.get(`${p.lessonId}/${p.studentId}`);
      if (!row || row.n !== 1) bad.push(`progress of ${p.studentId} on ${p.lessonId} found ${row?.n ?? 0}×`);
      else if (p.completed && !row.completed) bad.push(`progress of ${p.studentId} on ${p.lessonId} not completed`);
    }

    const notes = writesOf(records, 'note', true);
    const noteTries = writesOf(records, 'note', false);
    total += notes.length;
    const noteCounts = await counts(db, `select substr(content, 14) as k, count(*) as n from lesson_notes where content like 'cluster note %' group by 1`, []);
    for (const n of notes) if (noteCounts.get(n.token) !== 1) bad.push(`note ${n.token} (answered 2xx) found ${noteCounts.get(n.token) ?? 0}×`);
    for (const n of noteTries) if ((noteCounts.get(n.token) ?? 0) > 1) bad.push(`note ${n.token} (not answered 2xx) found ${noteCounts.get(n.token)}×`);
    stats.notesCommittedWithoutAnswer = noteTries.filter((n) => noteCounts.get(n.token) === 1).length;

    const attempts = writesOf(records, 'attempt', true).filter((a) => a.id);
    total += attempts.length;
    const attemptCounts = await counts(db, `select id as k, count(*) as n from quiz_attempts where id = any($1) group by id`, [attempts.map((a) => a.id)]);
    for (const a of attempts) if (attemptCounts.get(a.id!) !== 1) bad.push(`quiz attempt ${a.id} found ${attemptCounts.get(a.id!) ?? 0}×`);

    const subs = writesOf(records, 'submission', true).filter((s) => s.id);
    total += subs.length;
    const subById = await counts(db, `select id as k, count(*) as n from assignment_submissions where id = any($1) group by id`, [subs.map((s) => s.id)]);
    const subByPair = await counts(db, `select assignment_id || '/' || student_id as k, count(*) as n from assignment_submissions group by 1`, []);
    for (const s of subs) {
      if (subById.get(s.id!) !== 1) bad.push(`submission ${s.id} found ${subById.get(s.id!) ?? 0}×`);
      if (subByPair.get(`${s.assignmentId}/${s.studentId}`) !== 1)
        bad.push(`submissions of ${s.studentId} to ${s.assignmentId}: ${subByPair.get(`${s.assignmentId}/${s.studentId}`) ?? 0}`);
    }

    const grades = writesOf(records, 'grade', true);
    const gradeTries = [...grades, ...writesOf(records, 'grade', false)];
    total += grades.length;
    const graded = new Map(
      (
        await db.query<{ id: string; status: string; instructor_score: number; feedback: string }>(
          `select id, status, instructor_score, feedback from assignment_submissions where id = any($1)`,
          [grades.map((g) => g.submissionId)],
        )
      ).rows.map((r) => [r.id, r]),
    );
    for (const g of grades) {
      const row = graded.get(g.submissionId);
      const tried = gradeTries.filter((t) => t.submissionId === g.submissionId);
      if (!row || row.status !== 'GRADED') bad.push(`grade of ${g.submissionId}: submission ${row?.status ?? 'missing'}`);
      else if (!tried.some((t) => row.feedback === `cluster feedback ${t.token}` && Number(row.instructor_score) === t.score))
        bad.push(`grade of ${g.submissionId}: stored grade is none of those sent`);
    }

    const sessions = writesOf(records, 'liveSession', true).filter((s) => s.id);
    total += sessions.length;
    const sessionCounts = await counts(db, `select title as k, count(*) as n from live_sessions group by title`, []);
    for (const s of sessions) if (sessionCounts.get(s.title) !== 1) bad.push(`live session "${s.title}" found ${sessionCounts.get(s.title) ?? 0}×`);
    for (const s of writesOf(records, 'liveSession', false))
      if ((sessionCounts.get(s.title) ?? 0) > 1) bad.push(`live session "${s.title}" (not answered 2xx) found ${sessionCounts.get(s.title)}×`);

    const stops = writesOf(records, 'recordingStop', true);
    total += stops.length;
    const statuses = new Map(
      (await db.query<{ id: string; recording_status: string }>(`select id, recording_status from live_sessions where id = any($1)`, [stops.map((s) => s.sessionId)])).rows.map(
        (r) => [r.id, r.recording_status],
      ),
    );
    for (const s of stops) if (statuses.get(s.sessionId) !== 'READY') bad.push(`recording of ${s.sessionId} is ${statuses.get(s.sessionId)}, not READY`);
    stats.writes2xx = total;
    add('every write answered 2xx exists exactly once (and no write exists twice)', summarize(bad, total, 'writes found exactly once'));
  }

  // ── 2. the notifications each write causes, exactly once ──────────────────────────────────
  {
    const bad: string[] = [];
    const enrollments = writesOf(records, 'enrollment', true).filter((w) => w.id);
    const welcome = await counts(
      db,
      `select recipient_id || '/' || (metadata->>'courseId') || '/' || channel as k, count(*) as n from notifications where key = 'ENROLL_WELCOME' group by 1`,
      [],
    );
    for (const e of enrollments)
      for (const ch of ['IN_APP', 'email'])
        if (welcome.get(`${e.studentId}/${e.courseId}/${ch}`) !== 1)
          bad.push(`ENROLL_WELCOME ${ch} of ${e.studentId} in ${e.courseId}: ${welcome.get(`${e.studentId}/${e.courseId}/${ch}`) ?? 0}`);
    const { rows: fan } = await db.query<{ key: string; session: string; channel: string; n: number; recipients: number }>(
      `select key, metadata->>'sessionId' as session, channel, count(*)::int as n, count(distinct recipient_id)::int as recipients
       from notifications where key in ('LIVE_CLASS_SCHEDULED', 'LIVE_CLASS_RECORDING_READY') group by 1, 2, 3`,
    );
    const ready = (await db.query<{ id: string }>(`select id from live_sessions where course_id = $1 and recording_status = 'READY'`, [input.bigCourseId])).rows.map((r) => r.id);
    const scheduled = (await db.query<{ id: string }>(`select id from live_sessions where course_id = $1`, [input.bigCourseId])).rows.map((r) => r.id);
    const fanChecks: Array<[string, string]> = [
      ...scheduled.map((s) => ['LIVE_CLASS_SCHEDULED', s] as [string, string]),
      ...ready.map((s) => ['LIVE_CLASS_RECORDING_READY', s] as [string, string]),
    ];
    for (const [key, session] of fanChecks)
      for (const ch of ['IN_APP', 'email']) {
        const row = fan.find((f) => f.key === key && f.session === session && f.channel === ch);
        if (!row || row.n !== input.fanout || row.recipients !== input.fanout)
          bad.push(`${key} ${ch} of ${session}: ${row?.n ?? 0} rows to ${row?.recipients ?? 0} people, not ${input.fanout}`);
      }
    stats.fanoutNotices = fanChecks.length;
    const checked = enrollments.length * 2 + fanChecks.length * 2;
    add(
      'every enrollment welcomes once; every live class and recording of the large course notifies each of its students once',
      summarize(bad, checked, 'notification sets exact'),
    );
  }

  // ── 3. every notification row is final ───────────────────────────────────────────────────
  {
    const { rows } = await db.query<{ channel: string; status: string; reason: string | null; n: number }>(
      `select channel, status, failure_reason as reason, count(*)::int as n from notifications group by 1, 2, 3 order by 1, 2, 3`,
    );
    for (const r of rows) stats[`notifications.${r.channel}.${r.status}${r.reason ? `.${r.reason}` : ''}`] = r.n;
    const pending = rows.filter((r) => r.status === 'PENDING').reduce((s, r) => s + r.n, 0);
    const failedEmail = rows.filter((r) => r.status === 'FAILED' && r.channel === 'email');
    const total = rows.reduce((s, r) => s + r.n, 0);
    add('every notification row reached a final state (SENT, SKIPPED or FAILED), and no e-mail FAILED', {
      pass: pending === 0 && failedEmail.length === 0,
      detail: `${total} rows: ${rows.map((r) => `${r.channel} ${r.status}${r.reason ? ` (${r.reason})` : ''} ${r.n}`).join(', ')}`,
    });
  }

  // ── 4. every e-mail reached the SMTP sink exactly once (by Message-ID) ────────────────────
  {
    const mailbox = await readMailbox(input.mailDir);
    const sent = new Set((await db.query<{ id: string }>(`select id from notifications where channel = 'email' and status = 'SENT'`)).rows.map((r) => `<${r.id}@lms>`));
    const receipts = new Map<string, number[]>();
    for (const m of mailbox) receipts.set(m.messageId, [...(receipts.get(m.messageId) ?? []), m.receivedAt - input.loadStartedAt]);
    const kills = input.faults.filter((f) => f.kind === 'worker-kill' && f.marks.killed !== undefined).map((f) => f.marks.killed);
    const missing = [...sent].filter((id) => !receipts.has(id));
    const unknown = [...receipts.keys()].filter((id) => !sent.has(id));
    const duplicates = [...receipts.entries()].filter(([, times]) => times.length > 1);
    // The documented resend: the first copy accepted shortly before a kill, the second sent by the successor after it.
    const explained = duplicates.filter(([, times]) => {
      const [first, second] = [...times].sort((a, b) => a - b);
      return times.length === 2 && kills.some((k) => first <= k && k - first <= KILL_RESEND_WINDOW_MS && second > k);
    });
    const unexplained = duplicates.filter((d) => !explained.includes(d));
    stats.emailsSent = sent.size;
    stats.emailsReceived = mailbox.length;
    stats.emailsDistinct = receipts.size;
    stats.emailsResentAfterKill = explained.length;
    stats.emailsDuplicated = unexplained.length;
    const bad = [
      ...missing.slice(0, 3).map((id) => `SENT ${id} never reached the sink`),
      ...unknown.slice(0, 3).map((id) => `${id} reached the sink but its row is not SENT`),
      ...unexplained.slice(0, 3).map(([id, t]) => `${id} received ${t.length}×`),
    ];
    add(
      'every e-mail row SENT reached the SMTP sink exactly once by Message-ID (a second copy only when the first arrived within 2 s before a worker SIGKILL and the second after it)',
      {
        pass: missing.length === 0 && unknown.length === 0 && unexplained.length === 0,
        detail:
          `${sent.size} SENT e-mail rows, ${mailbox.length} messages received, ${receipts.size} distinct Message-IDs; ${missing.length} missing, ${unknown.length} not SENT, ` +
          `${unexplained.length} duplicated, ${explained.length} resent after a kill${bad.length ? `; e.g. ${bad.join('; ')}` : ''}`,
      },
    );
  }

  // ── 5. jobs ───────────────────────────────────────────────────────────────────────────────
  {
    const { rows } = await db.query<{ status: string; name: string; n: number; expired: number }>(
      `select status, name, count(*)::int as n, count(*) filter (where status = 'running' and locked_until < now())::int as expired from jobs group by 1, 2 order by 1, 2`,
    );
    for (const r of rows) stats[`jobs.${r.status}.${r.name}`] = r.n;
    const retried = await db.query<{ name: string; n: number }>(`select name, count(*)::int as n from jobs where attempts > 1 group by 1`);
    for (const r of retried.rows) stats[`jobs.retried.${r.name}`] = r.n;
    const expired = rows.reduce((s, r) => s + r.expired, 0);
    const dead = rows.filter((r) => r.status === 'dead');
    const deadErrors = dead.length
      ? (await db.query<{ name: string; last_error: string }>(`select name, last_error from jobs where status = 'dead' limit 3`)).rows.map((r) => `${r.name}: ${r.last_error}`)
      : [];
    add('no job is left running without a live lease, and no job died', {
      pass: expired === 0 && dead.length === 0,
      detail: `${rows.map((r) => `${r.name} ${r.status} ${r.n}`).join(', ')}; ${retried.rows.map((r) => `${r.name} retried ${r.n}`).join(', ') || 'none retried'}; ${expired} running with an expired lease${deadErrors.length ? `; dead: ${deadErrors.join('; ')}` : ''}`,
    });
  }

  // ── 6. rate limits shared ─────────────────────────────────────────────────────────────────
  add('rate limits are shared: one caller alternating between the replicas gets RATE_LIMIT_READ answers in all, then 429 from both', {
    pass: input.rateLimitChecks.length >= 2 && input.rateLimitChecks.every((c) => c.pass),
    detail: input.rateLimitChecks
      .map(
        (c) =>
          `${c.label}: ${c.allowed}/${c.limit} allowed, then ${Object.entries(c.after)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
      )
      .join('; '),
  });

  // ── 7. requests: none fail in the steady phase, errors stop after each fault, none fail during the rolling restart ──
  {
    // Requests are placed by the time they ended: one in flight when a fault struck belongs to that fault.
    const ended = (r: RequestRecord) => r.t + r.ms;
    const steady = records.filter((r) => ended(r) < input.steadyEnd);
    const steadyFailures = steady.filter((r) => isFailure(r) || isUnexpected4xx(r));
    add('no request failed in the steady phase before the first fault', {
      pass: steadyFailures.length === 0,
      detail: `${steady.length} requests, ${steadyFailures.length} failed${
        steadyFailures.length
          ? `: ${steadyFailures
              .slice(0, 3)
              .map((r) => `${r.op} ${r.status} ${r.error}`)
              .join('; ')}`
          : ''
      }`,
    });
    const unexpected = records.filter(isUnexpected4xx);
    add('no unexpected 4xx answer anywhere (only the 409s a retrying client expects)', {
      pass: unexpected.length === 0,
      detail: `${unexpected.length}${
        unexpected.length
          ? `: ${unexpected
              .slice(0, 3)
              .map((r) => `${r.op} ${r.status} ${r.error}`)
              .join('; ')}`
          : ''
      }`,
    });
    const bad: string[] = [];
    for (const f of input.faults.filter((x) => x.kind !== 'rolling-restart')) {
      const failed = records.filter((r) => ended(r) >= f.start && ended(r) < f.end && isFailure(r));
      const last = failed.length ? Math.max(...failed.map(ended)) : null;
      f.details.failedRequests = failed.length;
      f.details.errorsStoppedAfterBackMs = last === null ? 0 : Math.max(0, last - f.back);
      if (last !== null && last - f.back > RECOVERY_BOUND_MS) bad.push(`${f.kind}: errors until ${((last - f.back) / 1000).toFixed(1)} s after it was back`);
    }
    add(
      `after each fault, error responses stop within ${RECOVERY_BOUND_MS / 1000} s of the component being back`,
      summarize(bad, input.faults.length - 1, 'faults recovered in time'),
    );
    const rolling = input.faults.find((x) => x.kind === 'rolling-restart');
    if (rolling) {
      const during = records.filter((r) => ended(r) >= rolling.start && r.t <= rolling.back + 1000);
      const failed = during.filter((r) => isFailure(r) || isUnexpected4xx(r));
      rolling.details.requests = during.length;
      rolling.details.failedRequests = failed.length;
      add('rolling restart of both web replicas under load: zero failed requests', {
        pass: failed.length === 0,
        detail: `${during.length} requests during the restart, ${failed.length} failed${
          failed.length
            ? `: ${failed
                .slice(0, 3)
                .map((r) => `${r.op} ${r.status} ${r.error}`)
                .join('; ')}`
            : ''
        }`,
      });
    }
  }

  // ── 8. PostgreSQL restart: /readyz unready while down, ready after, pools recovered in place ──
  {
    const f = input.faults.find((x) => x.kind === 'pg-restart');
    if (f) {
      const bad: string[] = [];
      const names = [...new Set(input.readyz.map((s) => s.name))];
      const readyAfter: Record<string, number> = {};
      for (const name of names) {
        const mine = input.readyz.filter((s) => s.name === name);
        if (!mine.some((s) => s.t >= f.marks.down && s.t <= f.marks.up && s.status === 503)) bad.push(`${name} never answered 503 while PostgreSQL was down`);
        const ok = mine.find((s) => s.t >= f.marks.up && s.status === 200);
        if (!ok) bad.push(`${name} never answered 200 again`);
        else readyAfter[name] = ok.t - f.marks.up;
      }
      f.details.readyAgainAfterMs = readyAfter;
      const samePids = Object.entries(f.details.webPidsAfter as Record<string, number>).every(([k, v]) => (f.details.webPids as Record<string, number>)[k] === v);
      const sameWorkers = Object.entries(f.details.workerPidsAfter as Record<string, number>).every(([k, v]) => (f.details.workerPids as Record<string, number>)[k] === v);
      if (!samePids || !sameWorkers) bad.push('a replica process was replaced during the PostgreSQL restart');
      const workersAfter = f.details.workerJobsAfter as Record<string, number>;
      for (const [name, n] of Object.entries(workersAfter)) if (n === 0) bad.push(`${name} finished no job after PostgreSQL came back`);
      add('PostgreSQL restart: /readyz 503 while it is down and 200 after; every replica recovers its pool in the same process', {
        pass: bad.length === 0,
        detail: `ready again after ${Object.entries(readyAfter)
          .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
          .join(', ')}; worker jobs done after: ${JSON.stringify(workersAfter)}${bad.length ? `; ${bad.join('; ')}` : ''}`,
      });
    }
  }

  // ── 9. the worker kill landed in the middle of a delivery batch ───────────────────────────
  {
    const f = input.faults.find((x) => x.kind === 'worker-kill');
    if (f) {
      const mid = f.details.midBatch as { sentBeforeKill: number; pendingBeforeKill: number } | null;
      add('the worker SIGKILL landed in the middle of a delivery batch (some of its e-mails sent, some not)', {
        pass: mid !== null,
        detail: mid ? `${mid.sentBeforeKill} sent, ${mid.pendingBeforeKill} pending at the kill` : 'no batch was caught midway',
      });
    }
  }
  return { invariants: inv, stats };
}
