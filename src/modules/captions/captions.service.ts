import { createRequire } from 'node:module';
import { and, asc, desc, eq, isNull, ne, type SQL } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock.js';
import { withTx, type ServiceContext } from '../../platform/context.js';
import { isUniqueViolation } from '../../platform/db/errors.js';
import { iso } from '../../platform/dto.js';
import { AppError, conflict, notFound, validationError } from '../../platform/http/errors.js';
import { newId } from '../../platform/ids.js';
import { newObjectKey } from '../../platform/storage/index.js';
import { lessons, type Lesson } from '../courses/courses.tables.js';
import { requireAccess } from '../access/access.service.js';
import { audit, changes as changedFields, snapshot } from '../audit/audit.js';
import { captionTracks, type CaptionTrack } from './captions.tables.js';
import { MAX_CAPTION_BYTES, captionUploadFieldsSchema, type CaptionTrackDto, type CaptionUpdate, type Cue, type Transcript } from './captions.schemas.js';
import { byId, inTenant } from '../../platform/db/tenancy.js';

// ── WebVTT ─────────────────────────────────────────────────────────────────────

interface VttNode {
  type: 'text' | 'object' | 'timestamp';
  value?: unknown;
  children?: VttNode[];
}
interface VttCue {
  startTime: number;
  endTime: number;
  text: string;
  tree: VttNode | null;
}
interface VttParser {
  parse(input: string, mode?: 'metadata' | 'chapters'): { cues: VttCue[]; errors: Array<{ message: string; line: number; col?: number }> };
}

// webvtt-parser is CommonJS without types and assigns its exports at run time, which ESM
// named imports cannot see: load it through require. Its built-in entity table decodes
// `&amp;` as `&;`; the full HTML table it ships is the spec-compliant one.
const require = createRequire(import.meta.url);
const { WebVTTParser } = require('webvtt-parser') as { WebVTTParser: new (entities?: Record<string, string>) => VttParser };
const HTML_ENTITIES = require('webvtt-parser/html-entities.json') as Record<string, string>;

const VTT_CONTENT_TYPE = 'text/vtt';
const ACCEPTED_FILE_TYPES = new Set(['text/vtt', 'text/plain']);
const TRANSCRIPT_TTL_SECONDS = 3600;

/** Cue text without markup (`<v Speaker>`, `<i>`, timestamps); entities decoded by the parser. */
function plainText(node: VttNode | null): string {
  if (!node?.children) return '';
  return node.children.map((c) => (c.type === 'text' ? String(c.value ?? '') : c.type === 'object' ? plainText(c) : '')).join('');
}

function parseVtt(text: string) {
  return new WebVTTParser(HTML_ENTITIES).parse(text, 'metadata');
}

const toCues = (cues: VttCue[]): Cue[] => cues.map((c) => ({ start: c.startTime, end: c.endTime, text: plainText(c.tree) || c.text }));

// ── transcript cache ───────────────────────────────────────────────────────────

/**
 * Parsed cues per track, kept for 3600 s (spec 4.2 rule 7). Safe because a stored caption file
 * is never modified. Keyed by institution and track id; expiry follows the injected Clock
 * (lru-cache's own `ttl` reads real time).
 */
export class TranscriptCache {
  private readonly lru: LRUCache<string, { cues: Cue[]; expiresAt: number }>;

  constructor(
    private readonly clock: Clock,
    opts: { max?: number; maxChars?: number } = {},
  ) {
    this.lru = new LRUCache({
      max: opts.max ?? 1000,
      maxSize: opts.maxChars ?? 64 * 1024 * 1024,
      sizeCalculation: (v) =>
        Math.max(
          1,
          v.cues.reduce((n, c) => n + c.text.length + 16, 0),
        ),
    });
  }

  private static key(institutionId: string, captionId: string) {
    return `${institutionId}\u0000${captionId}`;
  }

  get(institutionId: string, captionId: string): Cue[] | undefined {
    const key = TranscriptCache.key(institutionId, captionId);
    const entry = this.lru.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now().getTime()) {
      this.lru.delete(key);
      return undefined;
    }
    return entry.cues;
  }

  set(institutionId: string, captionId: string, cues: Cue[]) {
    this.lru.set(TranscriptCache.key(institutionId, captionId), {
      cues,
      expiresAt: this.clock.now().getTime() + TRANSCRIPT_TTL_SECONDS * 1000,
    });
  }

  delete(institutionId: string, captionId: string) {
    this.lru.delete(TranscriptCache.key(institutionId, captionId));
  }
}

// ── mapping and lookups ────────────────────────────────────────────────────────

async function toDto(ctx: ServiceContext, t: CaptionTrack): Promise<CaptionTrackDto> {
  return {
    id: t.id,
    lessonId: t.lessonId,
    blockId: t.blockId,
    language: t.language,
    label: t.label,
    vttUrl: await ctx.storage.urlFor(t.storageKey),
    isDefault: t.isDefault,
    createdAt: iso(t.createdAt),
  };
}

async function findTrack(ctx: ServiceContext, lessonId: string, captionId: string): Promise<CaptionTrack> {
  const [row] = await ctx.db
    .select()
    .from(captionTracks)
    .where(and(inTenant(ctx, captionTracks), eq(captionTracks.lessonId, lessonId), eq(captionTracks.id, captionId)))
    .limit(1);
  if (!row) throw notFound('Caption track');
  return row;
}

/** The same video as (lesson, blockId): NULL-safe on blockId. */
const sameVideo = (ctx: ServiceContext, lessonId: string, blockId: string | null): SQL =>
  and(inTenant(ctx, captionTracks), eq(captionTracks.lessonId, lessonId), blockId === null ? isNull(captionTracks.blockId) : eq(captionTracks.blockId, blockId)) as SQL;

/**
 * Demote the current default of (lesson, blockId), except `keepId`. The lesson row is locked
 * first, so concurrent default changes on one lesson run one after the other and the partial
 * unique index never sees two defaults.
 */
async function demoteDefaults(tx: ServiceContext, lessonId: string, blockId: string | null, keepId?: string) {
  const locked = await tx.db
    .select({ id: lessons.id })
    .from(lessons)
    .where(byId(tx, lessons, lessonId))
    .for('no key update');
  if (locked.length === 0) throw notFound('Lesson');
  await tx.db
    .update(captionTracks)
    .set({ isDefault: false })
    .where(and(sameVideo(tx, lessonId, blockId), eq(captionTracks.isDefault, true), ...(keepId ? [ne(captionTracks.id, keepId)] : [])));
}

/** A default change that lost a race retries once; a second loss is 409 CONFLICT, never 500. */
async function retryOnDefaultRace<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  try {
    return await run();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('Another default caption track was set at the same time; try again');
    throw err;
  }
}

// ── reads ──────────────────────────────────────────────────────────────────────

/** Tracks of a lesson, default first, then oldest first. */
export async function listCaptions(ctx: ServiceContext, lessonId: string): Promise<CaptionTrackDto[]> {
  await requireAccess(ctx, 'lesson.open', lessonId);
  const rows = await ctx.db
    .select()
    .from(captionTracks)
    .where(and(inTenant(ctx, captionTracks), eq(captionTracks.lessonId, lessonId)))
    .orderBy(desc(captionTracks.isDefault), asc(captionTracks.createdAt), asc(captionTracks.id));
  return Promise.all(rows.map((r) => toDto(ctx, r)));
}

export async function getTranscript(ctx: ServiceContext, cache: TranscriptCache, lessonId: string, captionId: string): Promise<Transcript> {
  await requireAccess(ctx, 'lesson.open', lessonId);
  const track = await findTrack(ctx, lessonId, captionId);
  let cues = cache.get(ctx.institutionId, track.id);
  if (!cues) {
    let bytes: Buffer;
    try {
      bytes = await ctx.storage.get(track.storageKey);
    } catch (err) {
      ctx.log.warn(`[lms] caption ${track.id}: stored file ${track.storageKey} unavailable: ${(err as Error)?.message ?? err}`);
      throw new AppError('INTERNAL_ERROR', 'The caption file could not be fetched', undefined, 502);
    }
    // The file was validated on upload; parse leniently here and keep what parses.
    cues = toCues(parseVtt(new TextDecoder('utf-8').decode(bytes)).cues);
    cache.set(ctx.institutionId, track.id, cues);
  }
  return { captionId: track.id, language: track.language, label: track.label, cues };
}

// ── writes ─────────────────────────────────────────────────────────────────────

export interface CaptionFile {
  filename: string;
  mimetype: string;
  data: Buffer;
  /** True when the file was cut at the multipart size limit. */
  truncated?: boolean;
}

export interface CaptionForm {
  file: CaptionFile | null;
  fields: Record<string, string>;
}

type FieldIssue = { field: string; message: string };

/** Spec 4.2 rule 2: text/vtt or text/plain, or (any or empty type) with a .vtt name. */
export function isAcceptedCaptionFile(mimetype: string, filename: string): boolean {
  const type = mimetype.split(';')[0]!.trim().toLowerCase();
  return ACCEPTED_FILE_TYPES.has(type) || /\.vtt$/i.test(filename.trim());
}

function checkFile(file: CaptionFile | null, issues: FieldIssue[]): string | null {
  if (!file) {
    issues.push({ field: 'file', message: 'file is required' });
    return null;
  }
  if (file.truncated || file.data.length > MAX_CAPTION_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', 'The caption file is larger than 1 MB');
  }
  if (!isAcceptedCaptionFile(file.mimetype, file.filename)) {
    issues.push({ field: 'file', message: 'file must be text/vtt or text/plain, or have a .vtt extension' });
    return null;
  }
  let text: string;
  try {
    // Strips a UTF-8 BOM; WebVTT files are UTF-8.
    text = new TextDecoder('utf-8', { fatal: true }).decode(file.data);
  } catch {
    issues.push({ field: 'file', message: 'file must be UTF-8 text' });
    return null;
  }
  if (!text.startsWith('WEBVTT')) {
    issues.push({ field: 'file', message: 'file must begin with the WEBVTT header' });
    return null;
  }
  const { errors } = parseVtt(text);
  if (errors.length > 0) {
    const shown = errors.slice(0, 5).map((e) => `line ${e.line}: ${e.message}`);
    issues.push({ field: 'file', message: `invalid WebVTT: ${shown.join('; ')}${errors.length > 5 ? ` (+${errors.length - 5} more)` : ''}` });
    return null;
  }
  return text;
}

/**
 * A blockId must name a video block of a lesson made of blocks. A lesson without blocks has
 * nothing to check it against (spec 4.2 asks only for an optional id), so any id is taken.
 */
function checkBlock(lesson: Lesson, blockId: string | null, issues: FieldIssue[]) {
  const blocks = Array.isArray(lesson.blocks) ? lesson.blocks : [];
  if (blockId === null || blocks.length === 0) return;
  const block = blocks.find((b) => b && b.id === blockId);
  if (!block || typeof block.type !== 'string' || block.type.toLowerCase() !== 'video') {
    issues.push({ field: 'blockId', message: 'blockId must name a video block of this lesson' });
  }
}

/** What the audit log records of a created or deleted caption track. */
const CAPTION_AUDITED = ['lessonId', 'blockId', 'language', 'label', 'isDefault'] as const;

/**
 * Spec 4.2 POST: checks access before the body is read (`readForm` consumes the upload), then
 * validates everything before anything is written. The file goes to storage under a
 * server-generated key; if the row cannot be written, the object is removed again.
 */
export async function createCaption(ctx: ServiceContext, lessonId: string, readForm: () => Promise<CaptionForm>): Promise<CaptionTrackDto> {
  const { lesson } = await requireAccess(ctx, 'lesson.captions', lessonId);
  const form = await readForm();

  const issues: FieldIssue[] = [];
  const text = checkFile(form.file, issues);
  const parsed = captionUploadFieldsSchema.safeParse(form.fields);
  if (!parsed.success) {
    for (const i of parsed.error.issues) issues.push({ field: i.path.join('.') || 'body', message: i.message });
  } else {
    checkBlock(lesson, parsed.data.blockId, issues);
  }
  if (issues.length > 0 || !parsed.success || text === null || !form.file) {
    throw validationError('The caption upload is not valid', issues);
  }
  const { language, label, blockId, isDefault } = parsed.data;

  const key = newObjectKey(ctx.institutionId, 'captions', 'vtt');
  await ctx.storage.put(key, form.file.data, VTT_CONTENT_TYPE);
  let row: CaptionTrack;
  try {
    row = await retryOnDefaultRace(() =>
      withTx(ctx, async (tx) => {
        if (isDefault) await demoteDefaults(tx, lessonId, blockId);
        const [inserted] = await tx.db
          .insert(captionTracks)
          .values({
            id: newId(),
            institutionId: ctx.institutionId,
            lessonId,
            blockId,
            language,
            label,
            storageKey: key,
            isDefault,
            createdAt: ctx.clock.now(),
            createdBy: ctx.actor.personId,
          })
          .returning();
        await audit(tx, { action: 'caption.create', targetType: 'caption', targetId: inserted!.id, after: snapshot(inserted!, CAPTION_AUDITED) });
        return inserted!;
      }),
    );
  } catch (err) {
    // No partial write: the object goes again when its row could not be written.
    await ctx.storage.delete(key).catch((e: unknown) => {
      ctx.log.warn(`[lms] caption upload: could not remove orphaned object ${key}: ${(e as Error)?.message ?? e}`);
    });
    throw err;
  }
  return toDto(ctx, row);
}

export async function updateCaption(ctx: ServiceContext, lessonId: string, captionId: string, patch: CaptionUpdate): Promise<CaptionTrackDto> {
  await requireAccess(ctx, 'lesson.captions', lessonId);
  const track = await findTrack(ctx, lessonId, captionId);
  const changes: Partial<Pick<CaptionTrack, 'label' | 'language' | 'isDefault'>> = {};
  if (patch.label !== undefined) changes.label = patch.label;
  if (patch.language !== undefined) changes.language = patch.language;
  if (patch.isDefault !== undefined) changes.isDefault = patch.isDefault;
  if (Object.keys(changes).length === 0) return toDto(ctx, track);

  const row = await retryOnDefaultRace(() =>
    withTx(ctx, async (tx) => {
      if (changes.isDefault === true) await demoteDefaults(tx, lessonId, track.blockId, track.id);
      const [updated] = await tx.db
        .update(captionTracks)
        .set(changes)
        .where(and(inTenant(tx, captionTracks), eq(captionTracks.lessonId, lessonId), eq(captionTracks.id, captionId)))
        .returning();
      if (!updated) throw notFound('Caption track');
      await audit(tx, { action: 'caption.update', targetType: 'caption', targetId: updated.id, ...changedFields(track, updated, ['label', 'language', 'isDefault']) });
      return updated;
    }),
  );
  return toDto(ctx, row);
}

/** Spec 4.2 rule 6: the row goes; the stored file is removed best-effort. */
export async function deleteCaption(ctx: ServiceContext, cache: TranscriptCache, lessonId: string, captionId: string): Promise<{ id: string; deleted: true }> {
  await requireAccess(ctx, 'lesson.captions', lessonId);
  const removed = await withTx(ctx, async (tx) => {
    const [row] = await tx.db
      .delete(captionTracks)
      .where(and(inTenant(tx, captionTracks), eq(captionTracks.lessonId, lessonId), eq(captionTracks.id, captionId)))
      .returning();
    if (!row) throw notFound('Caption track');
    await audit(tx, { action: 'caption.delete', targetType: 'caption', targetId: row.id, before: snapshot(row, CAPTION_AUDITED) });
    return row;
  });
  cache.delete(ctx.institutionId, removed.id);
  try {
    await ctx.storage.delete(removed.storageKey);
  } catch (err) {
    ctx.log.warn(`[lms] caption ${removed.id}: stored file ${removed.storageKey} not removed: ${(err as Error)?.message ?? err}`);
  }
  return { id: removed.id, deleted: true as const };
}
