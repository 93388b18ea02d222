import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import mime from 'mime-types';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { iso } from '../../platform/dto.js';
import { AppError, conflict, forbidden, notFound, validationError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';
import { derivedKey, safeEqual } from '../../platform/auth/signatures.js';
import { enqueue } from '../../platform/queue/queue.js';
import { isStorageError } from '../../platform/storage/index.js';
import { assertValidKey, tenantSegment } from '../../platform/storage/keys.js';
import { stageToFile } from '../../platform/storage/staging.js';
import { lessons, type Lesson } from '../courses/courses.tables.js';
import type { Enrollment } from '../enrollments/enrollments.tables.js';
import { requireAccess } from '../access/access.service.js';
import { audit } from '../audit/audit.js';
import { displayNames } from '../institutions/display-names.js';
import { institutionSlug } from '../institutions/institutions.service.js';
import { lockOwnEnrollment, recordTrackedProgress } from '../progress/progress.service.js';
import {
  CHILDREN,
  EXIT_ELEMENT,
  SESSION_TIME_ELEMENT,
  accessOf,
  applyValues,
  countOf,
  evaluate,
  formatTimespan,
  timespanSeconds,
  type CmiError,
  type CmiValues,
} from './scorm.datamodel.js';
import { parseManifest, type ParsedManifest } from './scorm.manifest.js';
import { playerHtml } from './scorm.runtime.js';
import type { LaunchDto, PackageDto, ScoDto, TrackBody, TrackItem, TrackResult } from './scorm.schemas.js';
import {
  scormAttempts,
  scormPackageFiles,
  scormPackages,
  scormScos,
  type ScormAttempt,
  type ScormAttemptStatus,
  type ScormPackage,
  type ScormSco,
  type ScormVersion,
} from './scorm.tables.js';
import { openPackageZip, refusePackage, sizeOrDamage, type PackageEntry, type PackageZip } from './scorm.zip.js';

const ZIP_CONTENT_TYPES = new Set(['application/zip', 'application/x-zip-compressed', 'application/octet-stream']);
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** Files stored at once while a package is imported. */
const STORE_CONCURRENCY = 4;
/** Rows per insert statement, and keys per clean-up job (the job's payload limit). */
const INSERT_CHUNK = 1000;
const DELETE_JOB_CHUNK = 10_000;

const baseContentType = (v: string | undefined) => (v ?? '').split(';')[0]!.trim().toLowerCase();

// ── reading what is stored ─────────────────────────────────────────────────────

function assertScormLesson(lesson: Lesson) {
  if (lesson.type !== 'SCORM') throw notFound('SCORM lesson');
}

async function currentPackage(ctx: ServiceContext, lessonId: string): Promise<ScormPackage> {
  const [pkg] = await ctx.db
    .select()
    .from(scormPackages)
    .where(and(inTenant(ctx, scormPackages), eq(scormPackages.lessonId, lessonId), eq(scormPackages.status, 'CURRENT')))
    .limit(1);
  if (!pkg) throw notFound('SCORM package');
  return pkg;
}

async function packageScos(ctx: ServiceContext, packageId: string): Promise<ScormSco[]> {
  return ctx.db
    .select()
    .from(scormScos)
    .where(and(inTenant(ctx, scormScos), eq(scormScos.packageId, packageId)))
    .orderBy(asc(scormScos.position));
}

function scoDto(s: ScormSco): ScoDto {
  const { institutionId: _i, packageId: _p, ...rest } = s;
  return rest;
}

// ── upload ─────────────────────────────────────────────────────────────────────

export interface PackageUpload {
  contentType: string | undefined;
  contentLength: number | undefined;
  /** The request body: the zip, streamed to a temporary file (never held in memory). */
  body: Readable;
}

const tooLarge = (max: number) => new AppError('PAYLOAD_TOO_LARGE', `A SCORM package may be at most ${max} bytes`, { limit: max });

/**
 * PUT /api/scorm/{id}/package: stores a SCORM lesson's package. The zip is staged to a temporary
 * file (bounded by SCORM_MAX_PACKAGE_BYTES), its central directory checked (paths, links, sizes,
 * ratios, entry count, duplicates), its manifest parsed and its launch files found, all before
 * anything is stored; then each file goes to storage and the rows are written in one transaction
 * that replaces the lesson's current package. A refusal or a failure leaves nothing behind.
 */
export async function uploadPackage(ctx: ServiceContext, lessonId: string, upload: PackageUpload): Promise<PackageDto> {
  const { lesson } = await requireAccess(ctx, 'scorm.upload', lessonId);
  if (lesson.type !== 'SCORM') {
    throw validationError('Only a SCORM lesson takes a package', [{ field: 'params.id', message: `the lesson is a ${lesson.type} lesson` }]);
  }
  if (!ZIP_CONTENT_TYPES.has(baseContentType(upload.contentType))) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the package zip as the request body with Content-Type application/zip');
  }
  const maxBytes = ctx.config.SCORM_MAX_PACKAGE_BYTES;
  if (upload.contentLength !== undefined && upload.contentLength > maxBytes) throw tooLarge(maxBytes);

  const dir = await mkdtemp(path.join(tmpdir(), 'lms-scorm-'));
  try {
    let staged: { file: string; size: number };
    try {
      staged = await stageToFile(upload.body, dir, maxBytes);
    } catch (err) {
      if (isStorageError(err, 'TOO_LARGE')) throw tooLarge(maxBytes);
      // The staging disk failed (UNAVAILABLE, a 503): not the client's fault.
      if (isStorageError(err)) throw err;
      throw new AppError('VALIDATION_ERROR', 'Upload interrupted: the request body was not received completely');
    }
    if (staged.size === 0) throw refusePackage('not_a_zip', 'The request body is empty: send the package zip');
    const zip = await openPackageZip(staged.file, {
      maxEntries: ctx.config.SCORM_MAX_ENTRIES,
      maxTotalBytes: ctx.config.SCORM_MAX_UNCOMPRESSED_BYTES,
      maxEntryBytes: ctx.config.SCORM_MAX_ENTRY_BYTES,
      maxRatio: ctx.config.SCORM_MAX_COMPRESSION_RATIO,
    });
    try {
      const manifest = await readManifest(zip);
      const packageId = newId();
      const stored = await storeFiles(ctx, zip, packageId);
      try {
        return await savePackage(ctx, lesson, packageId, manifest, zip, stored);
      } catch (err) {
        await removeObjects(
          ctx,
          stored.map((f) => f.storageKey),
        );
        throw err;
      }
    } finally {
      zip.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function readManifest(zip: PackageZip): Promise<ParsedManifest> {
  const entry = zip.get('imsmanifest.xml');
  if (!entry) throw refusePackage('no_manifest', 'The package has no imsmanifest.xml at its root');
  const bytes = await zip.read(entry, MAX_MANIFEST_BYTES);
  let xml: string;
  try {
    // UTF-8 (a BOM is dropped); UTF-16 manifests are decoded by their BOM.
    const utf16 = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : null;
    xml = new TextDecoder(utf16 ?? 'utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refusePackage('bad_manifest', 'imsmanifest.xml is not valid UTF-8 or UTF-16 text', { entry: 'imsmanifest.xml' });
  }
  const manifest = parseManifest(xml);
  for (const sco of manifest.scos) {
    if (!zip.get(sco.launchPath)) {
      throw refusePackage('missing_file', `The launch file ${sco.launchPath} of item ${sco.identifier} is not in the package`, { entry: sco.launchPath });
    }
  }
  return manifest;
}

interface StoredFile {
  path: string;
  storageKey: string;
  contentType: string;
  size: number;
}

/** `text/html; charset=utf-8` for `.html`, and so on; anything unknown is served as bytes. */
function contentTypeOf(name: string): string {
  return mime.contentType(path.posix.extname(name)) || 'application/octet-stream';
}

/** `<tenant>/scorm/<package id>/<n>.<ext>`: server-made keys, grouped by package. */
function fileKey(institutionId: string, packageId: string, index: number, name: string): string {
  const ext = path.posix.extname(name).slice(1).toLowerCase();
  const key = `${tenantSegment(institutionId)}/scorm/${packageId}/${String(index).padStart(5, '0')}${/^[a-z0-9]{1,8}$/.test(ext) ? `.${ext}` : ''}`;
  assertValidKey(key);
  return key;
}

/** Every file of the zip into storage, a few at a time; on any failure what was stored is removed. */
async function storeFiles(ctx: ServiceContext, zip: PackageZip, packageId: string): Promise<StoredFile[]> {
  const stored: StoredFile[] = [];
  let next = 0;
  let failure: unknown = null;
  const storeOne = async (entry: PackageEntry, index: number) => {
    const storageKey = fileKey(ctx.institutionId, packageId, index, entry.name);
    const contentType = contentTypeOf(entry.name);
    const stream = await zip.stream(entry);
    try {
      await ctx.storage.putStream(storageKey, stream, contentType, Math.max(1, entry.size));
    } catch (err) {
      throw isStorageError(err) && err.code !== 'TOO_LARGE' ? err : sizeOrDamage(entry, err);
    }
    stored.push({ path: entry.name, storageKey, contentType, size: entry.size });
  };
  const worker = async () => {
    while (failure === null && next < zip.files.length) {
      const index = next++;
      try {
        await storeOne(zip.files[index]!, index);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: STORE_CONCURRENCY }, worker));
  if (failure !== null) {
    await removeObjects(
      ctx,
      stored.map((f) => f.storageKey),
    );
    throw failure;
  }
  return stored;
}

/** Best effort: a key that cannot be removed now is logged (the objects are unreachable without rows). */
async function removeObjects(ctx: ServiceContext, keys: string[]) {
  for (const key of keys) {
    await ctx.storage.delete(key).catch((err: unknown) => ctx.log.warn(`[lms] SCORM object ${key} not removed: ${(err as Error)?.message ?? err}`));
  }
}

/** Enqueues the removal of stored objects in the caller's transaction (after its commit they are unreferenced). */
export async function enqueueObjectRemoval(tx: ServiceContext, keys: string[]) {
  for (let i = 0; i < keys.length; i += DELETE_JOB_CHUNK) {
    await enqueue(tx.db, tx.clock, 'storage.deleteObjects', { keys: keys.slice(i, i + DELETE_JOB_CHUNK) }, { institutionId: tx.institutionId });
  }
}

async function savePackage(ctx: ServiceContext, lesson: Lesson, packageId: string, manifest: ParsedManifest, zip: PackageZip, stored: StoredFile[]): Promise<PackageDto> {
  return withTx(ctx, async (tx) => {
    // One upload at a time per lesson: the lesson row is locked while its current package changes.
    const locked = await tx.db
      .select({ id: lessons.id, type: lessons.type })
      .from(lessons)
      .where(byId(tx, lessons, lesson.id))
      .for('update');
    if (!locked[0]) throw notFound('Lesson');
    if (locked[0].type !== 'SCORM') throw validationError('Only a SCORM lesson takes a package', [{ field: 'params.id', message: 'the lesson type changed' }]);
    const now = tx.clock.now();
    const [replaced] = await tx.db
      .update(scormPackages)
      .set({ status: 'REPLACED' })
      .where(and(inTenant(tx, scormPackages), eq(scormPackages.lessonId, lesson.id), eq(scormPackages.status, 'CURRENT')))
      .returning({ id: scormPackages.id });
    if (replaced) {
      // The replaced package's rows stay for its attempts; its files go.
      const gone = await tx.db
        .delete(scormPackageFiles)
        .where(and(inTenant(tx, scormPackageFiles), eq(scormPackageFiles.packageId, replaced.id)))
        .returning({ key: scormPackageFiles.storageKey });
      await enqueueObjectRemoval(
        tx,
        gone.map((g) => g.key),
      );
    }
    const [pkg] = await tx.db
      .insert(scormPackages)
      .values({
        id: packageId,
        institutionId: tx.institutionId,
        lessonId: lesson.id,
        version: manifest.version,
        schemaVersion: manifest.schemaVersion,
        manifestIdentifier: manifest.identifier,
        title: manifest.title,
        organizationIdentifier: manifest.organizationIdentifier,
        organization: manifest.organization,
        sequencing: manifest.sequencing,
        fileCount: stored.length,
        totalBytes: zip.totalBytes,
        uploadedBy: tx.actor.personId,
        createdAt: now,
      })
      .returning();
    const scos = await tx.db
      .insert(scormScos)
      .values(manifest.scos.map((s, position) => ({ ...s, id: newId(), institutionId: tx.institutionId, packageId, position })))
      .returning();
    const rows = stored.map((f) => ({ id: newId(), institutionId: tx.institutionId, packageId, ...f }));
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.db.insert(scormPackageFiles).values(rows.slice(i, i + INSERT_CHUNK));
    await audit(tx, {
      action: 'scorm.upload',
      targetType: 'lesson',
      targetId: lesson.id,
      after: { packageId, version: manifest.version, title: manifest.title, scos: scos.length, files: stored.length, replacedPackageId: replaced?.id ?? null },
    });
    return {
      id: pkg!.id,
      lessonId: pkg!.lessonId,
      version: pkg!.version,
      schemaVersion: pkg!.schemaVersion,
      manifestIdentifier: pkg!.manifestIdentifier,
      title: pkg!.title,
      organizationIdentifier: pkg!.organizationIdentifier,
      organization: pkg!.organization,
      sequencing: pkg!.sequencing,
      fileCount: pkg!.fileCount,
      totalBytes: pkg!.totalBytes,
      scos: scos.sort((a, b) => a.position - b.position).map(scoDto),
      uploadedBy: pkg!.uploadedBy,
      createdAt: iso(pkg!.createdAt),
      replacedPackageId: replaced?.id ?? null,
    };
  });
}

// ── launch grant (content URLs) ────────────────────────────────────────────────

/** The key of launch grants: HKDF of AUTH_SECRET with its own info string (never a session-token key). */
const GRANT_KEY_INFO = 'lms:scorm-content:v1';

function grantSignature(ctx: ServiceContext, lessonId: string, packageId: string, expiresAt: number): string {
  const fields = [ctx.institutionId, lessonId, packageId, ctx.actor.personId, expiresAt];
  return createHmac('sha256', derivedKey(ctx.config.AUTH_SECRET, GRANT_KEY_INFO)).update(JSON.stringify(fields)).digest('hex');
}

/**
 * A path segment `<expiry>-<signature>` that grants the caller (institution and person) the
 * files of one package of one lesson until the expiry. Issued by a launch, which checked the
 * lesson's open rule; checked again per file together with the caller's session.
 */
function issueGrant(ctx: ServiceContext, lessonId: string, packageId: string) {
  const expiresAt = Math.floor(ctx.clock.now().getTime() / 1000) + ctx.config.SCORM_LAUNCH_TTL_SECONDS;
  return { token: `${expiresAt}-${grantSignature(ctx, lessonId, packageId, expiresAt)}`, expiresAt: new Date(expiresAt * 1000) };
}

function checkGrant(ctx: ServiceContext, lessonId: string, packageId: string, token: string) {
  const m = /^(\d{1,12})-([0-9a-f]{64})$/.exec(token);
  // Someone else's grant, another package's or a made-up one: as if the file did not exist.
  if (!m || !safeEqual(m[2]!, grantSignature(ctx, lessonId, packageId, Number(m[1])))) throw notFound('File');
  if (Number(m[1]) < Math.floor(ctx.clock.now().getTime() / 1000)) throw forbidden('This launch has expired: launch the lesson again');
}

const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

// ── launch ─────────────────────────────────────────────────────────────────────

/** The learner's enrollment when it admits them (tracking happens only then). */
const learnerEnrollment = (e: Enrollment | null) => (e && e.status !== 'DROPPED' ? e : null);

async function latestAttempt(ctx: ServiceContext, scoId: string): Promise<ScormAttempt | null> {
  const [row] = await ctx.db
    .select()
    .from(scormAttempts)
    .where(and(inTenant(ctx, scormAttempts), eq(scormAttempts.scoId, scoId), eq(scormAttempts.studentId, ctx.actor.personId)))
    .orderBy(desc(scormAttempts.attemptNumber))
    .limit(1);
  return row ?? null;
}

/** `ab-initio` for a new attempt; `resume` after a suspend (also one that never reached Terminate); else "". */
function entryOf(version: ScormVersion, attempt: ScormAttempt | null): 'ab-initio' | 'resume' | '' {
  if (!attempt) return 'ab-initio';
  if (attempt.status === 'SUSPENDED' || attempt.cmi[EXIT_ELEMENT[version]] === 'suspend') return 'resume';
  return '';
}

/**
 * SCORM 1.2 `cmi.core.student_name` is "Last, First" (the 1.2 RTE data model): from the names of
 * the caller's CRM record (contact, else staff user), else the session's name split at its last
 * space; null when neither is known (the display name then stands as it is). 2004's
 * `cmi.learner_name` has no such rule and is the display name.
 */
async function lastNameFirst(ctx: ServiceContext): Promise<string | null> {
  const id = ctx.actor.personId;
  const slug = await institutionSlug(ctx, ctx.institutionId).catch(() => null);
  const person = slug ? ((await ctx.crm.getContactOrNull(slug, id)) ?? (await ctx.crm.getUserOrNull(slug, id))) : null;
  const [first, last] = [person?.firstName?.trim(), person?.lastName?.trim()];
  if (first && last) return `${last}, ${first}`;
  if (first || last) return (last || first)!;
  const name = ctx.actor.name?.trim();
  if (!name) return null;
  const cut = name.lastIndexOf(' ');
  return cut > 0 && !name.includes(',') ? `${name.slice(cut + 1)}, ${name.slice(0, cut).trim()}` : name;
}

/** Everything the SCO may read at launch: the LMS's read-only values and the attempt's stored ones, without write-only elements. */
function initialCmi(opts: {
  version: ScormVersion;
  sco: ScormSco;
  attempt: ScormAttempt | null;
  learnerId: string;
  learnerName: string;
  entry: string;
  mode: 'normal' | 'browse';
  credit: 'credit' | 'no-credit';
}): CmiValues {
  const { version, sco, attempt } = opts;
  const stored = attempt?.cmi ?? {};
  const cmi: CmiValues = {};
  for (const [k, v] of Object.entries(stored)) if (accessOf(version, k) !== 'wo' && accessOf(version, k) !== undefined) cmi[k] = v;
  const total = formatTimespan(version, attempt?.totalTimeSeconds ?? 0);
  if (version === '1.2') {
    Object.assign(cmi, {
      'cmi.core.student_id': opts.learnerId,
      'cmi.core.student_name': opts.learnerName,
      'cmi.core.credit': opts.credit,
      'cmi.core.entry': opts.entry,
      'cmi.core.lesson_mode': opts.mode,
      'cmi.core.total_time': total,
      'cmi.core.lesson_status': stored['cmi.core.lesson_status'] ?? 'not attempted',
      'cmi.core.lesson_location': stored['cmi.core.lesson_location'] ?? '',
      'cmi.suspend_data': stored['cmi.suspend_data'] ?? '',
      'cmi.launch_data': sco.launchData ?? '',
      'cmi.comments_from_lms': '',
      'cmi.student_data.mastery_score': sco.masteryScore === null ? '' : String(sco.masteryScore),
      'cmi.student_data.max_time_allowed': sco.maxTimeAllowed ?? '',
      'cmi.student_data.time_limit_action': sco.timeLimitAction ?? '',
    });
  } else {
    Object.assign(cmi, {
      'cmi._version': '1.0',
      'cmi.learner_id': opts.learnerId,
      'cmi.learner_name': opts.learnerName,
      'cmi.credit': opts.credit,
      'cmi.entry': opts.entry,
      'cmi.mode': opts.mode,
      'cmi.total_time': total,
      'cmi.completion_status': stored['cmi.completion_status'] ?? 'unknown',
      'cmi.success_status': stored['cmi.success_status'] ?? 'unknown',
      'cmi.launch_data': sco.launchData ?? '',
      'cmi.time_limit_action': sco.timeLimitAction ?? 'continue,no message',
    });
    if (sco.scaledPassingScore !== null) cmi['cmi.scaled_passing_score'] = String(sco.scaledPassingScore);
    if (sco.completionThreshold !== null) cmi['cmi.completion_threshold'] = String(sco.completionThreshold);
    if (sco.maxTimeAllowed) cmi['cmi.max_time_allowed'] = sco.maxTimeAllowed;
  }
  Object.assign(cmi, CHILDREN[version]);
  for (const prefix of ['cmi.objectives', 'cmi.interactions', ...(version === '2004' ? ['cmi.comments_from_learner', 'cmi.comments_from_lms'] : [])]) {
    cmi[`${prefix}._count`] = String(countOf(stored, prefix));
  }
  return cmi;
}

async function prepareLaunch(ctx: ServiceContext, lessonId: string, scoRef: string | undefined) {
  const opened = await requireAccess(ctx, 'scorm.launch', lessonId);
  assertScormLesson(opened.lesson);
  const pkg = await currentPackage(ctx, lessonId);
  const scos = await packageScos(ctx, pkg.id);
  const sco = scoRef === undefined ? scos[0] : scos.find((s) => s.id === scoRef || s.identifier === scoRef);
  if (!sco) throw notFound('SCO');
  const learner = learnerEnrollment(opened.enrollment);
  const mode = learner ? ('normal' as const) : ('browse' as const);
  const credit = learner ? ('credit' as const) : ('no-credit' as const);
  const version = pkg.version;
  let attempt: ScormAttempt | null = null;
  let completedScos = new Set<string>();
  if (learner) {
    const latest = await latestAttempt(ctx, sco.id);
    attempt = latest && latest.status !== 'ENDED' && latest.packageId === pkg.id ? latest : null;
    const done = await ctx.db
      .selectDistinct({ scoId: scormAttempts.scoId })
      .from(scormAttempts)
      .where(and(inTenant(ctx, scormAttempts), eq(scormAttempts.packageId, pkg.id), eq(scormAttempts.studentId, ctx.actor.personId), eq(scormAttempts.completed, true)));
    completedScos = new Set(done.map((d) => d.scoId));
  }
  const entry = entryOf(version, attempt);
  const learnerName =
    (version === '1.2' ? await lastNameFirst(ctx) : null) ??
    ctx.actor.name ??
    (await displayNames(ctx, [{ id: ctx.actor.personId, label: ctx.actor.role === 'STUDENT' ? 'Student' : 'User' }])).get(ctx.actor.personId) ??
    ctx.actor.personId;
  const cmi = initialCmi({ version, sco, attempt, learnerId: ctx.actor.personId, learnerName, entry, mode, credit });
  const grant = issueGrant(ctx, lessonId, pkg.id);
  const base = ctx.config.publicBaseUrl;
  const contentPath = `/api/scorm/${encodeURIComponent(lessonId)}/content/${grant.token}/`;
  const scoPath = `${contentPath}${encodePath(sco.launchPath)}${sco.launchQuery}`;
  const trackPath = `/api/scorm/${encodeURIComponent(lessonId)}/track`;
  const launch: LaunchDto = {
    lessonId,
    packageId: pkg.id,
    version,
    schemaVersion: pkg.schemaVersion,
    title: pkg.title,
    launchUrl: `${base}${scoPath}`,
    contentBaseUrl: `${base}${contentPath}`,
    playerUrl: `${base}/api/scorm/${encodeURIComponent(lessonId)}/player?scoId=${encodeURIComponent(sco.id)}`,
    trackUrl: `${base}${trackPath}`,
    expiresAt: grant.expiresAt.toISOString(),
    scos: scos.map((s) => ({ id: s.id, identifier: s.identifier, title: s.title, scormType: s.scormType, isVisible: s.isVisible, completed: completedScos.has(s.id) })),
    sco: { id: sco.id, identifier: sco.identifier, title: sco.title, scormType: sco.scormType },
    attempt: attempt ? { id: attempt.id, number: attempt.attemptNumber, status: attempt.status, startedAt: iso(attempt.startedAt) } : null,
    state: {
      entry,
      mode,
      credit,
      location: cmi[version === '1.2' ? 'cmi.core.lesson_location' : 'cmi.location'] ?? '',
      suspendData: cmi['cmi.suspend_data'] ?? '',
      completionStatus: attempt?.completionStatus ?? (version === '1.2' ? 'not attempted' : 'unknown'),
      successStatus: attempt?.successStatus ?? 'unknown',
      scorePercent: attempt?.scorePercent ?? null,
      totalTime: formatTimespan(version, attempt?.totalTimeSeconds ?? 0),
    },
    cmi,
  };
  return { launch, scoPath, trackPath };
}

/** GET /api/scorm/{id}/launch */
export async function launch(ctx: ServiceContext, lessonId: string, scoRef?: string): Promise<LaunchDto> {
  return (await prepareLaunch(ctx, lessonId, scoRef)).launch;
}

/** GET /api/scorm/{id}/player: the launch page with the run-time API adapter. */
export async function player(ctx: ServiceContext, lessonId: string, scoRef?: string): Promise<string> {
  const { launch: l, scoPath, trackPath } = await prepareLaunch(ctx, lessonId, scoRef);
  return playerHtml({
    title: l.sco.title === l.title ? l.title : `${l.title}: ${l.sco.title}`,
    scoUrl: scoPath,
    runtime: { version: l.version, trackUrl: trackPath, scoId: l.sco.id, attemptId: l.attempt?.id ?? null, cmi: l.cmi, tracked: l.state.mode === 'normal' },
  });
}

// ── content ────────────────────────────────────────────────────────────────────

/** GET /api/scorm/{id}/content/{token}/{path}: one file of the package, for the caller the grant names. */
export async function openContent(ctx: ServiceContext, lessonId: string, token: string, filePath: string) {
  const { lesson } = await requireAccess(ctx, 'scorm.content', lessonId);
  assertScormLesson(lesson);
  const pkg = await currentPackage(ctx, lessonId);
  checkGrant(ctx, lessonId, pkg.id, token);
  const [file] = await ctx.db
    .select()
    .from(scormPackageFiles)
    .where(and(inTenant(ctx, scormPackageFiles), eq(scormPackageFiles.packageId, pkg.id), eq(scormPackageFiles.path, path.posix.normalize(filePath))))
    .limit(1);
  if (!file) throw notFound('File');
  try {
    return { stream: await ctx.storage.getStream(file.storageKey), contentType: file.contentType, size: file.size };
  } catch (err) {
    if (isStorageError(err, 'NOT_FOUND')) {
      ctx.log.warn(`[lms] SCORM file ${file.storageKey} of package ${pkg.id} is missing from storage`);
      throw notFound('File');
    }
    throw err;
  }
}

// ── track ──────────────────────────────────────────────────────────────────────

/** The exits that end an attempt on Terminate (an empty one too, once the SCO is completed, passed or failed). */
const ENDING_EXITS = new Set(['normal', 'logout', 'time-out']);

/** Elements whose value the LMS may determine (returned so the adapter reads what the LMS decided). */
const STATUS_ELEMENTS: Record<ScormVersion, string[]> = {
  '1.2': ['cmi.core.lesson_status'],
  '2004': ['cmi.completion_status', 'cmi.success_status'],
};

interface AttemptOutcome {
  attempt: ScormAttempt;
  lmsValues: Record<string, string>;
}

/**
 * POST /api/scorm/{id}/track: one or more batches of SetValue calls (with Commit or Terminate),
 * validated against the package version's data model. Any refused element refuses the whole
 * request (400, every refused element with its SCORM error code) and nothing is stored.
 */
export async function track(ctx: ServiceContext, lessonId: string, body: TrackBody): Promise<TrackResult> {
  const { lesson, course } = await requireAccess(ctx, 'scorm.track', lessonId);
  assertScormLesson(lesson);
  const items = Array.isArray(body) ? body : [body];
  const listed = Array.isArray(body);
  return withTx(ctx, async (tx) => {
    // Serialises the learner's tracking (attempt numbers, statuses) with their other progress writes.
    const enrollmentId = (await lockOwnEnrollment(tx, course.id)).id;
    const pkg = await currentPackage(tx, lessonId);
    const scos = await packageScos(tx, pkg.id);
    const errors: Array<CmiError & { item?: number }> = [];
    const outcomes: AttemptOutcome[] = [];
    for (const [i, item] of items.entries()) {
      const sco = item.scoId === undefined ? scos[0] : scos.find((s) => s.id === item.scoId || s.identifier === item.scoId);
      if (!sco) {
        throw validationError('Unknown SCO', [{ field: listed ? `body.${i}.scoId` : 'body.scoId', message: 'not a SCO of the lesson’s current package' }]);
      }
      const outcome = await trackItem(tx, pkg, sco, enrollmentId, item, listed ? `body.${i}` : 'body');
      if ('errors' in outcome) errors.push(...outcome.errors.map((e) => (listed ? { ...e, item: i } : e)));
      else outcomes.push(outcome);
    }
    if (errors.length > 0) {
      throw new AppError('VALIDATION_ERROR', `${errors.length} CMI value${errors.length === 1 ? ' was' : 's were'} refused; nothing was stored`, {
        version: pkg.version,
        errors,
        fields: errors.map((e) => ({ field: `${listed ? `body.${e.item}.` : 'body.'}values.${e.element}`, message: `${e.message} (SCORM error ${e.code})` })),
      });
    }
    const lessonState = await lessonOutcome(tx, pkg, scos);
    const progress = await recordTrackedProgress(tx, course, lesson.id, {
      completed: lessonState.completed || undefined,
      progressPercent: lessonState.progressPercent,
      score: lessonState.scorePercent ?? undefined,
    });
    return {
      attempts: outcomes.map(({ attempt: a, lmsValues }) => ({
        scoId: a.scoId,
        attemptId: a.id,
        attemptNumber: a.attemptNumber,
        status: a.status,
        completionStatus: a.completionStatus,
        successStatus: a.successStatus,
        scorePercent: a.scorePercent,
        completed: a.completed,
        totalTime: formatTimespan(pkg.version, a.totalTimeSeconds),
        lmsValues,
      })),
      lesson: lessonState,
      progress: {
        lessonId: progress.lessonId,
        completed: progress.completed,
        completedAt: progress.completedAt,
        progressPercent: progress.progressPercent,
        progress: progress.progress,
        status: progress.status,
        courseCompleted: progress.courseCompleted,
        completedNow: progress.completedNow,
        certificateId: progress.certificateId,
      },
    };
  });
}

/** The attempt an item writes to: the one named (the caller's, not ended), else the open one, else a new one. */
async function attemptFor(tx: ServiceContext, pkg: ScormPackage, sco: ScormSco, enrollmentId: string, item: TrackItem, field: string): Promise<ScormAttempt> {
  if (item.attemptId) {
    const [named] = await tx.db
      .select()
      .from(scormAttempts)
      .where(and(byId(tx, scormAttempts, item.attemptId), eq(scormAttempts.studentId, tx.actor.personId), eq(scormAttempts.scoId, sco.id)))
      .limit(1);
    if (!named) throw notFound('Attempt');
    if (named.status === 'ENDED') throw conflict('This attempt has ended: launch again for a new attempt', { field: `${field}.attemptId`, attemptId: named.id });
    return named;
  }
  const latest = await latestAttempt(tx, sco.id);
  if (latest && latest.status !== 'ENDED') return latest;
  const now = tx.clock.now();
  const [created] = await tx.db
    .insert(scormAttempts)
    .values({
      id: newId(),
      institutionId: tx.institutionId,
      packageId: pkg.id,
      scoId: sco.id,
      lessonId: pkg.lessonId,
      enrollmentId,
      studentId: tx.actor.personId,
      attemptNumber: (latest?.attemptNumber ?? 0) + 1,
      status: 'IN_PROGRESS',
      cmi: {},
      completionStatus: pkg.version === '1.2' ? 'not attempted' : 'unknown',
      successStatus: 'unknown',
      startedAt: now,
      updatedAt: now,
    })
    .returning();
  return created!;
}

async function trackItem(
  tx: ServiceContext,
  pkg: ScormPackage,
  sco: ScormSco,
  enrollmentId: string,
  item: TrackItem,
  field: string,
): Promise<AttemptOutcome | { errors: CmiError[] }> {
  const version = pkg.version;
  const attempt = await attemptFor(tx, pkg, sco, enrollmentId, item, field);
  const changes = Object.entries(item.values).map(([k, v]) => [k, String(v)] as [string, string]);
  const applied = applyValues(version, attempt.cmi, changes);
  if (applied.errors.length > 0) return { errors: applied.errors };
  const result = evaluate(version, applied.values, sco, true);
  const values = result.values;
  let status: ScormAttemptStatus = attempt.status === 'SUSPENDED' && changes.length === 0 && !item.terminate ? 'SUSPENDED' : 'IN_PROGRESS';
  let totalTimeSeconds = attempt.totalTimeSeconds;
  let lastExit = attempt.lastExit;
  let endedAt: Date | null = null;
  if (item.terminate) {
    // The session ends: its time joins the total, and its exit decides what the next launch is.
    totalTimeSeconds += timespanSeconds(version, values[SESSION_TIME_ELEMENT[version]]);
    const exit = values[EXIT_ELEMENT[version]] ?? '';
    const reached = result.completionStatus === 'completed' || result.successStatus !== 'unknown';
    status = exit === 'suspend' ? 'SUSPENDED' : ENDING_EXITS.has(exit) || (exit === '' && reached) ? 'ENDED' : 'IN_PROGRESS';
    if (status === 'ENDED') endedAt = tx.clock.now();
    lastExit = exit;
    delete values[SESSION_TIME_ELEMENT[version]];
    delete values[EXIT_ELEMENT[version]];
  }
  const [updated] = await tx.db
    .update(scormAttempts)
    .set({
      cmi: values,
      status,
      completionStatus: result.completionStatus,
      successStatus: result.successStatus,
      scorePercent: result.scorePercent,
      completed: attempt.completed || result.completed,
      totalTimeSeconds,
      lastExit,
      endedAt,
      updatedAt: tx.clock.now(),
    })
    .where(byId(tx, scormAttempts, attempt.id))
    .returning();
  const lmsValues = Object.fromEntries(STATUS_ELEMENTS[version].filter((e) => values[e] !== undefined).map((e) => [e, values[e]!]));
  return { attempt: updated!, lmsValues };
}

/**
 * The lesson from its SCOs: complete when every SCO (assets do not count, unless the package has
 * no SCO) has a completed attempt; the score is the mean of each SCO's latest score; the percent is
 * the share of completed SCOs, or a single SCO's progress measure.
 */
async function lessonOutcome(tx: ServiceContext, pkg: ScormPackage, scos: ScormSco[]) {
  const counted = scos.some((s) => s.scormType === 'sco') ? scos.filter((s) => s.scormType === 'sco') : scos;
  const ids = counted.map((s) => s.id);
  const attempts = await tx.db
    .select({
      scoId: scormAttempts.scoId,
      completed: scormAttempts.completed,
      scorePercent: scormAttempts.scorePercent,
      cmi: scormAttempts.cmi,
      number: scormAttempts.attemptNumber,
    })
    .from(scormAttempts)
    .where(and(inTenant(tx, scormAttempts), eq(scormAttempts.packageId, pkg.id), eq(scormAttempts.studentId, tx.actor.personId), inArray(scormAttempts.scoId, ids)))
    .orderBy(asc(scormAttempts.attemptNumber));
  const completed = new Set<string>();
  const latestScore = new Map<string, number>();
  let progressMeasure: number | null = null;
  for (const a of attempts) {
    if (a.completed) completed.add(a.scoId);
    if (a.scorePercent !== null) latestScore.set(a.scoId, a.scorePercent);
    const pm = a.cmi['cmi.progress_measure'];
    if (pm !== undefined) progressMeasure = Number(pm) * 100;
  }
  const scores = [...latestScore.values()];
  const allDone = ids.length > 0 && ids.every((id) => completed.has(id));
  const share = ids.length === 0 ? 0 : (completed.size / ids.length) * 100;
  const progressPercent = allDone ? 100 : ids.length === 1 && progressMeasure !== null ? Math.min(99, progressMeasure) : share;
  return {
    completed: allDone,
    scorePercent: scores.length ? Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 100) / 100 : null,
    progressPercent: Math.round(progressPercent),
    scos: ids.length,
    completedScos: completed.size,
  };
}
