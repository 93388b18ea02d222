import { z } from 'zod';
import { charsBetween } from '../../platform/text.js';

/**
 * Caption languages a track may declare (spec 2.2): ISO 639-1 codes, lower case. The list
 * covers the most spoken languages worldwide plus the main languages of the regions the
 * service is used in. Adding a code is a one-line change.
 */
export const SUPPORTED_CAPTION_LANGUAGES = [
  'en',
  'zh',
  'hi',
  'es',
  'fr',
  'ar',
  'bn',
  'pt',
  'ru',
  'ur',
  'id',
  'de',
  'ja',
  'sw',
  'mr',
  'te',
  'tr',
  'ta',
  'vi',
  'ko',
  'it',
  'fa',
  'pl',
  'uk',
  'nl',
  'th',
  'ms',
  'gu',
  'kn',
  'pa',
  'ml',
  'or',
  'ne',
  'si',
  'my',
  'km',
  'tl',
  'am',
  'ha',
  'yo',
  'ig',
  'zu',
  'xh',
  'af',
  'so',
  'he',
  'el',
  'cs',
  'sk',
  'hu',
  'ro',
  'bg',
  'sr',
  'hr',
  'sv',
  'no',
  'da',
  'fi',
  'az',
  'kk',
  'uz',
  'ps',
  'ca',
  'lt',
  'lv',
  'et',
  'sl',
] as const;
export type CaptionLanguage = (typeof SUPPORTED_CAPTION_LANGUAGES)[number];

/** Spec part 8: caption file at most 1 MB; label 1 to 80 characters. */
export const MAX_CAPTION_BYTES = 1_048_576;
export const MAX_LABEL_LENGTH = 80;

/** Multipart `isDefault` values that mean true (spec 4.2); anything else is false. */
export const TRUE_FORM_VALUES = ['true', '1', 'on'] as const;

const LANGUAGE_DOC = `ISO 639-1 code from SUPPORTED_CAPTION_LANGUAGES: ${SUPPORTED_CAPTION_LANGUAGES.join(', ')}`;

export const captionLanguageSchema = z
  .enum(SUPPORTED_CAPTION_LANGUAGES, {
    error: `language must be an ISO 639-1 code from the supported list (${SUPPORTED_CAPTION_LANGUAGES.join(', ')})`,
  })
  .describe(LANGUAGE_DOC);

export const captionLabelSchema = z
  .string()
  .trim()
  .min(1, 'label must not be empty')
  .refine(charsBetween(0, MAX_LABEL_LENGTH), `label must be at most ${MAX_LABEL_LENGTH} characters`)
  .describe('1 to 80 characters (trimmed)');

export const captionTrackSchema = z.object({
  id: z.string(),
  lessonId: z.string(),
  blockId: z.string().nullable().describe('video block of the lesson; null means the lesson-level video'),
  language: z.string().describe('ISO 639-1 code'),
  label: z.string(),
  vttUrl: z.string().describe('signed URL of the WebVTT file'),
  isDefault: z.boolean().describe('at most one default per (lesson, blockId)'),
  createdAt: z.string().describe('ISO 8601'),
});
export type CaptionTrackDto = z.infer<typeof captionTrackSchema>;

export const cueSchema = z.object({
  start: z.number().describe('seconds'),
  end: z.number().describe('seconds'),
  text: z.string().describe('cue text without markup'),
});
export type Cue = z.infer<typeof cueSchema>;

export const transcriptSchema = z.object({
  captionId: z.string(),
  language: z.string(),
  label: z.string(),
  cues: z.array(cueSchema),
});
export type Transcript = z.infer<typeof transcriptSchema>;

export const lessonParams = z.object({ id: z.string().min(1).describe('lesson id') });
export const captionParams = z.object({
  id: z.string().min(1).describe('lesson id'),
  captionId: z.string().min(1),
});

/** The text fields of the multipart upload, as they arrive (strings). */
export const captionUploadFieldsSchema = z.object({
  language: captionLanguageSchema,
  label: captionLabelSchema,
  blockId: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => (v ? v : null)),
  isDefault: z
    .string()
    .optional()
    .transform((v) => (TRUE_FORM_VALUES as readonly string[]).includes((v ?? '').trim().toLowerCase())),
});
export type CaptionUploadFields = z.output<typeof captionUploadFieldsSchema>;

const captionUploadFormDoc = z.object({
  file: z.file().describe('WebVTT file: type text/vtt or text/plain, or a .vtt name; must begin with WEBVTT; at most 1 MB'),
  language: captionLanguageSchema,
  label: z.string().describe('1 to 80 characters (trimmed)'),
  blockId: z.string().optional().describe('id of a video block of the lesson; absent = lesson-level video'),
  isDefault: z.string().optional().describe('"true", "1" or "on" make the track the default (others of the same video are demoted)'),
});

/**
 * The multipart body, for OpenAPI only. The route reads the stream itself and Fastify sees no
 * parsed body (null) for multipart requests, so the validating schema accepts anything and
 * carries the form's JSON Schema as metadata.
 */
export const captionUploadBodyDoc = z.any().meta({
  ...(z.toJSONSchema(captionUploadFormDoc, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>),
  $schema: undefined,
  description: 'multipart/form-data',
});

export const captionUpdateBody = z.object({
  label: captionLabelSchema.optional(),
  language: captionLanguageSchema.optional(),
  // The upload's form values work here too, so a client sends the same thing to both.
  isDefault: z
    .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'on', 'off']), z.literal(1), z.literal(0)])
    .transform((v) => v === true || v === 1 || (TRUE_FORM_VALUES as readonly unknown[]).includes(v))
    .optional()
    .describe('true (also "true", "1", 1 or "on", as on upload) demotes the other default of the same (lesson, blockId); false ("false", "0", 0, "off") unsets it'),
});
export type CaptionUpdate = z.infer<typeof captionUpdateBody>;
