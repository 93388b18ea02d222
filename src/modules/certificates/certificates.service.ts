import { randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { DateTime } from 'luxon';
import type { Clock } from '../../platform/clock.js';
import type { ServiceContext } from '../../platform/context.js';
import type { CrmClient } from '../../platform/crm/types.js';
import type { Db } from '../../platform/db/client.js';
import { iso } from '../../platform/dto.js';
import { newId } from '../../platform/ids.js';
import { enqueue, enqueueMany } from '../../platform/queue/queue.js';
import { notFound, validationError } from '../../platform/http/errors.js';
import { pageMeta, pageOffset, toPage } from '../../platform/http/pagination.js';
import type { Storage } from '../../platform/storage/types.js';
import { newObjectKey } from '../../platform/storage/index.js';
import type { Course } from '../courses/courses.tables.js';
import type { Enrollment } from '../enrollments/enrollments.tables.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { certificates, type Certificate } from './certificates.tables.js';
import { byId, byIdForJob, inTenant } from '../../platform/db/tenancy.js';

export const CERTIFICATE_PDF_JOB = 'certificates.renderPdf';
// No 0/O/1/I: codes are read and typed by people.
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function verificationCode(length = 12): string {
  const bytes = randomBytes(length);
  return Array.from(bytes, (b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('');
}

/** `months` calendar months later (UTC), clamped to the month's end: 31 January + 1 month is 28 (or 29) February, not 3 March. */
function addMonths(d: Date, months: number) {
  return DateTime.fromJSDate(d, { zone: 'utc' }).plus({ months }).toJSDate();
}

/**
 * Issue the certificate of a completed enrollment, in the completing transaction; the PDF is
 * rendered by the worker so the transaction stays short. One certificate per enrollment.
 */
export async function issueCertificate(ctx: ServiceContext, course: Course, enrollment: Enrollment, validityMonths: number | null): Promise<Certificate | null> {
  const now = ctx.clock.now();
  const id = newId();
  const number = `CERT-${now.getUTCFullYear()}-${id.replace(/-/g, '').slice(-10).toUpperCase()}`;
  const [row] = await ctx.db
    .insert(certificates)
    .values({
      id,
      institutionId: enrollment.institutionId,
      courseId: course.id,
      enrollmentId: enrollment.id,
      studentId: enrollment.studentId,
      courseTitle: course.title,
      certificateNumber: number,
      verificationCode: verificationCode(),
      finalScore: enrollment.finalScore,
      issuedAt: now,
      expiresAt: validityMonths ? addMonths(now, validityMonths) : null,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) return null;
  await enqueue(ctx.db, ctx.clock, CERTIFICATE_PDF_JOB, { certificateId: row.id, institutionId: row.institutionId }, { institutionId: row.institutionId });
  return row;
}

export async function renderCertificatePdf(c: Certificate, holderName: string): Promise<Buffer> {
  // Loaded when a PDF is rendered (in the worker), not at start-up.
  const { default: PDFDocument } = await import('pdfkit');
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: 60, info: { Title: `Certificate ${c.certificateNumber}` } });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.fontSize(34).text('Certificate of Completion', { align: 'center' });
    doc.moveDown(1.5).fontSize(16).text('This certifies that', { align: 'center' });
    doc.moveDown(0.5).fontSize(26).text(holderName, { align: 'center' });
    doc.moveDown(0.5).fontSize(16).text('has completed the course', { align: 'center' });
    doc.moveDown(0.5).fontSize(22).text(c.courseTitle, { align: 'center' });
    doc
      .moveDown(1.5)
      .fontSize(12)
      .text(`Issued ${c.issuedAt.toISOString().slice(0, 10)}${c.expiresAt ? ` · valid until ${c.expiresAt.toISOString().slice(0, 10)}` : ''}`, { align: 'center' });
    doc.text(`Certificate number ${c.certificateNumber} · verification code ${c.verificationCode}`, { align: 'center' });
    doc.end();
  });
}

export interface PdfDeps {
  db: Db;
  crm: CrmClient;
  clock: Clock;
  storage: Storage;
}

async function holderName(deps: PdfDeps, c: Certificate) {
  const slug = await institutionSlug(deps, c.institutionId).catch(() => null);
  const name = slug ? await deps.crm.displayNameOrNull(slug, c.studentId) : null;
  // Never the person's id (the public verification page shows this): the CRM name or null.
  return name ?? null;
}

/** Printed when the CRM cannot name the holder; such a PDF is provisional. */
const FALLBACK_HOLDER = 'Certificate holder';

/**
 * Worker job `certificates.renderPdf`: render and store a certificate's PDF, the certificate
 * looked up within `institutionId` (null only for a job queued before jobs named it). A PDF
 * with the holder's name is final and made once. Without it (the CRM down) the fallback PDF is
 * stored as provisional, so there is something to download, and replaced by the next run that
 * gets the name (see `refreshProvisionalPdfs`).
 */
export async function renderStoredPdf(deps: PdfDeps, certificateId: string, institutionId: string | null): Promise<void> {
  const [c] = await deps.db
    .select()
    .from(certificates)
    .where(byIdForJob(institutionId, certificates, certificateId))
    .limit(1);
  if (!c || (c.pdfKey && !c.pdfProvisional)) return;
  const name = await holderName(deps, c);
  // Still no name: the provisional PDF already stored is as good as a new one.
  if (!name && c.pdfKey) return;
  const pdf = await renderCertificatePdf(c, name ?? FALLBACK_HOLDER);
  const key = newObjectKey(c.institutionId, 'certificates', 'pdf');
  await deps.storage.put(key, pdf, 'application/pdf');
  // Only over what this run read: a concurrent run that stored first wins.
  const replaced = await deps.db
    .update(certificates)
    .set({ pdfKey: key, pdfProvisional: !name })
    .where(and(byId(c, certificates, c.id), c.pdfKey ? eq(certificates.pdfKey, c.pdfKey) : isNull(certificates.pdfKey)))
    .returning({ id: certificates.id });
  const unused = replaced.length > 0 ? c.pdfKey : key;
  if (unused) await enqueue(deps.db, deps.clock, 'storage.deleteObjects', { keys: [unused] }, { institutionId: c.institutionId });
}

/**
 * Queue a render for each provisional PDF among `rows` (one pending job per certificate), so
 * a certificate rendered while the CRM was down gets the holder's name once it answers.
 */
export async function refreshProvisionalPdfs(deps: { db: Db; clock: Clock }, rows: Certificate[]): Promise<void> {
  const items = rows
    .filter((c) => c.pdfProvisional)
    .map((c) => ({
      payload: { certificateId: c.id, institutionId: c.institutionId },
      opts: { institutionId: c.institutionId, singletonKey: `${CERTIFICATE_PDF_JOB}:${c.id}` },
    }));
  if (items.length > 0) await enqueueMany(deps.db, deps.clock, CERTIFICATE_PDF_JOB, items);
}

export async function toCertificateDto(storage: Storage, c: Certificate) {
  return {
    id: c.id,
    courseId: c.courseId,
    enrollmentId: c.enrollmentId,
    studentId: c.studentId,
    courseTitle: c.courseTitle,
    certificateNumber: c.certificateNumber,
    verificationCode: c.verificationCode,
    finalScore: c.finalScore,
    issuedAt: iso(c.issuedAt) as string,
    expiresAt: iso(c.expiresAt),
    pdfUrl: c.pdfKey ? await storage.urlFor(c.pdfKey) : null,
  };
}

/** GET /api/certificates — the caller's certificates, newest first. */
export async function myCertificates(ctx: ServiceContext, q: { page: number; perPage?: number; limit?: number }) {
  const page = toPage(q);
  const where = and(inTenant(ctx, certificates), eq(certificates.studentId, ctx.actor.personId));
  const [rows, [{ total }]] = await Promise.all([
    ctx.db.select().from(certificates).where(where).orderBy(desc(certificates.issuedAt), desc(certificates.id)).limit(page.perPage).offset(pageOffset(page)),
    ctx.db
      .select({ total: sql<number>`count(*)::int` })
      .from(certificates)
      .where(where),
  ]);
  await refreshProvisionalPdfs(ctx, rows);
  return { rows: await Promise.all(rows.map((c) => toCertificateDto(ctx.storage, c))), meta: pageMeta(page, total) };
}

/**
 * GET /api/certificates/verify?code= — public. Only validity, course title, dates and the
 * holder's display name: nothing else about the holder.
 */
export async function verifyCertificate(deps: PdfDeps, code: string | undefined) {
  const normalized = (code ?? '').trim().toUpperCase();
  if (!normalized) throw validationError('code is required', [{ field: 'querystring.code', message: 'required' }]);
  const [c] = await deps.db.select().from(certificates).where(eq(certificates.verificationCode, normalized)).limit(1);
  if (!c) throw notFound('Certificate');
  const now = deps.clock.now();
  return {
    valid: !c.expiresAt || c.expiresAt.getTime() > now.getTime(),
    certificateNumber: c.certificateNumber,
    courseTitle: c.courseTitle,
    issuedAt: iso(c.issuedAt) as string,
    expiresAt: iso(c.expiresAt),
    holderName: await holderName(deps, c),
  };
}
