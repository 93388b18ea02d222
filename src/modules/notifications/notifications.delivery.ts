import { and, asc, eq, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/context.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { retryWhileUnavailable } from '../../platform/db/errors.js';
import { isCrmError } from '../../platform/crm/client.js';
import { MailError, type MailAttachment } from '../../platform/mail/mailer.js';
import { isStorageError } from '../../platform/storage/types.js';
import type { PushDevice } from '../../platform/push/push.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { absoluteActionUrl, renderHtml, renderText } from './notifications.render.js';
import { notificationDevices, notifications, type NotificationRow } from './notifications.tables.js';

/** A delivery that failed for now (SMTP or push service down, CRM unreachable): the job retries. */
class TransientDeliveryError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** A delivery that can never succeed (no address, refused address, no device left). */
class PermanentDeliveryError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface DeliveryRun {
  /** The job's last attempt (about 24 h after its first): rows still failing transiently are marked FAILED instead of retried. */
  lastAttempt: boolean;
  signal: AbortSignal;
}

export interface DeliverySummary {
  inApp: number;
  sent: number;
  failed: number;
  retry: number;
}

/** E-mail addresses of recipients, read through the CRM: contact first, then staff user. */
function addressBook(deps: Deps, institutionId: string) {
  let slug: Promise<string | null> | undefined;
  const cache = new Map<string, Promise<string>>();
  const lookup = async (personId: string): Promise<string> => {
    slug ??= institutionSlug({ db: deps.database.db, crm: deps.crm, clock: deps.clock }, institutionId).catch(() => null);
    const s = await slug;
    if (!s) throw new TransientDeliveryError('crm_unavailable');
    for (const read of [() => deps.crm.getContact(s, personId), () => deps.crm.getUser(s, personId)]) {
      try {
        const person = await read();
        if (person.email) return person.email;
        throw new PermanentDeliveryError('no_email_address');
      } catch (err) {
        if (isCrmError(err) && err.reason === 'not_found') continue;
        if (isCrmError(err)) throw new TransientDeliveryError('crm_unavailable');
        throw err;
      }
    }
    throw new PermanentDeliveryError('no_email_address');
  };
  return (personId: string) => {
    let found = cache.get(personId);
    if (!found) {
      found = lookup(personId);
      cache.set(personId, found);
    }
    return found;
  };
}

const textWithLink = (message: string, link: string | null) => (link ? `${message}\n\n${link}` : message);

/** The row's attachments read from storage; a file that is gone can never be sent. */
async function attachmentsOf(deps: Deps, row: NotificationRow): Promise<MailAttachment[] | undefined> {
  if (!row.attachments?.length) return undefined;
  return Promise.all(
    row.attachments.map(async (a) => {
      try {
        return { filename: a.fileName, content: await deps.storage.get(a.key), contentType: a.contentType };
      } catch (err) {
        if (isStorageError(err, 'NOT_FOUND')) throw new PermanentDeliveryError('attachment_missing');
        throw new TransientDeliveryError('storage_unavailable');
      }
    }),
  );
}

/**
 * Mark rows SENT: only while PENDING, so a row is recorded sent once whoever races. The message
 * is already out, so a database that is briefly unavailable (a PostgreSQL restart) is waited
 * for: giving up here would leave the row PENDING and the retried job would send it again.
 */
async function markSent(deps: Deps, ids: string[]) {
  const now = deps.clock.now();
  await retryWhileUnavailable(
    () =>
      deps.database.db
        .update(notifications)
        .set({ status: 'SENT', sentAt: now, updatedAt: now, failureReason: null, attempts: sql`${notifications.attempts} + 1` })
        .where(and(inArray(notifications.id, ids), eq(notifications.status, 'PENDING'))),
    { onRetry: (err) => deps.log.warn?.(`[lms] recording ${ids.length} sent notification(s) waits for the database: ${(err as Error).message}`) },
  );
}

async function markFailed(deps: Deps, ids: string[], reason: string, final: boolean) {
  const now = deps.clock.now();
  await deps.database.db
    .update(notifications)
    .set({ ...(final ? { status: 'FAILED' as const } : {}), failureReason: reason, updatedAt: now, attempts: sql`${notifications.attempts} + 1` })
    .where(and(inArray(notifications.id, ids), eq(notifications.status, 'PENDING')));
}

/** The outcome of one send, as the row records it. */
async function settle(deps: Deps, row: NotificationRow, run: DeliveryRun, send: () => Promise<void>, summary: DeliverySummary): Promise<'sent' | 'failed' | 'retry'> {
  try {
    await send();
    await markSent(deps, [row.id]);
    summary.sent++;
    return 'sent';
  } catch (err) {
    if (err instanceof PermanentDeliveryError) {
      await markFailed(deps, [row.id], err.reason, true);
      summary.failed++;
      return 'failed';
    } else if (err instanceof TransientDeliveryError) {
      await markFailed(deps, [row.id], err.reason, run.lastAttempt);
      if (run.lastAttempt) summary.failed++;
      else summary.retry++;
      return run.lastAttempt ? 'failed' : 'retry';
    } else throw err;
  }
}

/**
 * Transient e-mail failures in a row after which an attempt stops trying e-mail: the SMTP server
 * or the CRM is down, and one that does not answer would hold the job a timeout per row, for
 * each of the many attempts of a long outage. Not one failure: a 4xx for one recipient
 * (greylisting, a full mailbox) must not hold back the rest of the batch, and rows are tried
 * least-tried first, so a recipient that keeps failing sinks behind the others. The last attempt
 * tries every row.
 */
const EMAIL_FAILURES_BEFORE_DEFERRING = 3;

const mailFailure = (err: unknown) => {
  if (err instanceof MailError) return err.permanent ? new PermanentDeliveryError(err.reason) : new TransientDeliveryError(err.reason);
  return err;
};

/** Sends to every device of the recipient; a device the push service calls gone is deleted. */
async function pushToDevices(deps: Deps, row: NotificationRow) {
  const devices = await deps.database.db
    .select()
    .from(notificationDevices)
    .where(and(inTenant(row, notificationDevices), eq(notificationDevices.userId, row.recipientId)));
  if (devices.length === 0) throw new PermanentDeliveryError('no_push_device');
  const url = absoluteActionUrl(row.actionUrl, deps.config.publicBaseUrl);
  let delivered = false;
  let transient: string | null = null;
  let permanent: string | null = null;
  for (const device of devices) {
    const target: PushDevice = { token: device.token, platform: device.platform, provider: device.provider };
    const result = await deps.push.send(target, { title: row.title, body: row.message, url, data: { notificationId: row.id, key: row.key } });
    if (result.ok) {
      delivered = true;
      continue;
    }
    if (result.gone) {
      await deps.database.db.delete(notificationDevices).where(byId(device, notificationDevices, device.id));
    }
    if (result.permanent) permanent = result.reason;
    else transient = result.reason;
  }
  if (delivered) return;
  if (transient) throw new TransientDeliveryError(transient);
  throw new PermanentDeliveryError(permanent ?? 'push_failed');
}

/**
 * The `notifications.deliver` job: in-app rows of the batch become SENT in one statement; each
 * e-mail and push row is sent and recorded on its own, so a worker that dies mid-batch leaves
 * the rows it finished SENT and the next attempt (another worker, after the lease) sends only
 * the rest. Transient failures (SMTP, CRM, push service or storage unavailable) keep their rows
 * PENDING with the reason and fail the job, which retries for up to 24 h (`OUTAGE_RETRY` in
 * jobs.schemas.ts): an outage of hours delays the rows, loses none. Only the last attempt's
 * transient failures become FAILED. Permanent failures are FAILED at once and never retried.
 */
export async function deliverBatch(deps: Deps, payload: { institutionId: string; batchId: string }, run: DeliveryRun): Promise<DeliverySummary> {
  const { db } = deps.database;
  const now = deps.clock.now();
  const inApp = await db
    .update(notifications)
    .set({ status: 'SENT', sentAt: now, updatedAt: now, attempts: sql`${notifications.attempts} + 1` })
    .where(and(inTenant(payload, notifications), eq(notifications.batchId, payload.batchId), eq(notifications.channel, 'IN_APP'), eq(notifications.status, 'PENDING')))
    .returning({ id: notifications.id });
  const summary: DeliverySummary = { inApp: inApp.length, sent: 0, failed: 0, retry: 0 };

  const pending = await db
    .select()
    .from(notifications)
    .where(and(inTenant(payload, notifications), eq(notifications.batchId, payload.batchId), eq(notifications.status, 'PENDING'), isNull(notifications.digestDueAt)))
    // Least-tried first: rows that keep failing go last, so they cannot defer the others for good.
    .orderBy(asc(notifications.attempts), asc(notifications.id));
  const emailOf = addressBook(deps, payload.institutionId);
  let emailFailuresInARow = 0;
  for (const row of pending) {
    run.signal.throwIfAborted();
    if (row.channel === 'email') {
      if (emailFailuresInARow >= EMAIL_FAILURES_BEFORE_DEFERRING && !run.lastAttempt) {
        summary.retry++; // left PENDING as it is, for the next attempt
        continue;
      }
      const outcome = await settle(
        deps,
        row,
        run,
        async () => {
          const to = await emailOf(row.recipientId);
          const link = absoluteActionUrl(row.actionUrl, deps.config.publicBaseUrl);
          const attachments = await attachmentsOf(deps, row);
          await deps.mailer
            .send({ to, subject: row.title, text: textWithLink(row.message, link), html: row.html ?? undefined, messageId: `<${row.id}@lms>`, attachments })
            .catch((err: unknown) => {
              throw mailFailure(err);
            });
        },
        summary,
      );
      emailFailuresInARow = outcome === 'retry' ? emailFailuresInARow + 1 : 0;
    } else if (row.channel === 'push') {
      await settle(deps, row, run, () => pushToDevices(deps, row), summary);
    }
  }
  if (summary.retry > 0) throw new Error(`${summary.retry} deliveries of batch ${payload.batchId} failed for now; retrying`);
  return summary;
}

const DIGEST_SUBJECT = 'Your {{kind}} digest: {{count}} notification{{^one}}s{{/one}}';
const DIGEST_TEXT = '{{#items}}- {{title}}\n  {{message}}{{#link}}\n  {{link}}{{/link}}\n{{/items}}';
const DIGEST_HTML =
  '<!doctype html><html><body style="font-family:sans-serif"><h1>Your {{kind}} digest</h1><ul>' +
  '{{#items}}<li><strong>{{title}}</strong><br>{{message}}{{#link}} <a href="{{link}}">Open</a>{{/link}}</li>{{/items}}</ul></body></html>';

/** The frequency whose held rows a digest of `kind` sends. */
const FREQUENCY_OF_KIND = { DAILY: 'DAILY_DIGEST', WEEKLY: 'WEEKLY_DIGEST' } as const;

/**
 * The `notifications.sendDigest` job: every held e-mail row of one person, of this digest's kind
 * (a daily digest never takes weekly rows, nor the other way round), that is due goes out as one
 * digest e-mail, and the rows become SENT together. The job first claims the rows by writing its
 * own batch id (`digest:<job id>`) on those no other digest job claimed: two digest jobs of one
 * person (an old and a rescheduled one, or a daily and a weekly one due at once) never send a
 * row twice, and a retry of this job (another worker after a crash) finds its claimed rows again.
 */
export async function sendDigest(
  deps: Deps,
  payload: { institutionId: string; recipientId: string; kind: 'DAILY' | 'WEEKLY' },
  run: DeliveryRun & { jobId: string },
): Promise<number> {
  const { db } = deps.database;
  const claim = `digest:${run.jobId}`;
  const now = deps.clock.now();
  const claimed = await db
    .update(notifications)
    .set({ batchId: claim, updatedAt: now })
    .where(
      and(
        inTenant(payload, notifications),
        eq(notifications.recipientId, payload.recipientId),
        eq(notifications.channel, 'email'),
        eq(notifications.status, 'PENDING'),
        eq(notifications.frequency, FREQUENCY_OF_KIND[payload.kind]),
        isNotNull(notifications.digestDueAt),
        or(and(lte(notifications.digestDueAt, now), isNull(notifications.batchId)), eq(notifications.batchId, claim)),
      ),
    )
    .returning();
  if (claimed.length === 0) return 0;
  const rows = claimed.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const ids = rows.map((r) => r.id);
  const view = {
    kind: payload.kind === 'DAILY' ? 'daily' : 'weekly',
    count: rows.length,
    one: rows.length === 1,
    items: rows.map((r) => ({ title: r.title, message: r.message, link: absoluteActionUrl(r.actionUrl, deps.config.publicBaseUrl) })),
  };
  try {
    const to = await addressBook(deps, payload.institutionId)(payload.recipientId);
    await deps.mailer
      .send({ to, subject: renderText(DIGEST_SUBJECT, view), text: renderText(DIGEST_TEXT, view), html: renderHtml(DIGEST_HTML, view), messageId: `<digest-${ids[0]}@lms>` })
      .catch((err: unknown) => {
        throw mailFailure(err);
      });
  } catch (err) {
    if (err instanceof PermanentDeliveryError) {
      await markFailed(deps, ids, err.reason, true);
      return 0;
    }
    if (err instanceof TransientDeliveryError) {
      await markFailed(deps, ids, err.reason, run.lastAttempt);
      if (run.lastAttempt) return 0;
      throw new Error(`digest for ${payload.recipientId} failed for now (${err.reason}); retrying`, { cause: err });
    }
    throw err;
  }
  await markSent(deps, ids);
  return rows.length;
}
