import { z } from 'zod';
import { optionalFilter } from '../../platform/http/query-filters.js';

export const scormParams = z.object({ id: z.string().min(1).max(200).describe('id of the SCORM lesson') });

export const launchQuery = z.object({
  scoId: optionalFilter(z.string().max(500)).describe('the SCO to launch: its id or its manifest item identifier (default: the first)'),
});

export const contentParams = z.object({
  id: z.string().min(1).max(200).describe('id of the SCORM lesson'),
  token: z.string().min(1).max(200).describe('the launch grant from GET /api/scorm/{id}/launch (`contentBaseUrl`)'),
  asset: z.string().min(1).max(1024).describe('a file of the package (any depth under the grant; this documents one segment)'),
});

/** The hidden twin of the content route, which takes any depth. */
export const contentWildcardParams = z.object({ id: contentParams.shape.id, token: contentParams.shape.token, '*': z.string().max(1024) });

/** The raw zip of PUT /api/scorm/{id}/package, for the OpenAPI document. */
export const packageBodyDoc = z.any().meta({ type: 'string', format: 'binary', description: 'the package zip (Content-Type application/zip)' });

const organizationItem: z.ZodType<unknown> = z.lazy(() =>
  z.object({ identifier: z.string(), title: z.string(), launchable: z.boolean(), isVisible: z.boolean(), children: z.array(organizationItem) }),
);

export const scoSchema = z.object({
  id: z.string(),
  identifier: z.string().describe('the manifest item identifier'),
  resourceIdentifier: z.string(),
  title: z.string(),
  position: z.number().int(),
  scormType: z.enum(['sco', 'asset']),
  launchPath: z.string().describe('the launch file, relative to the package root'),
  launchQuery: z.string().describe('query and fragment of the launch (href and item parameters)'),
  isVisible: z.boolean(),
  masteryScore: z.number().nullable().describe('1.2 adlcp:masteryscore'),
  scaledPassingScore: z.number().nullable().describe('2004: the primary objective’s minNormalizedMeasure (satisfiedByMeasure)'),
  completionThreshold: z.number().nullable().describe('2004 adlcp:completionThreshold'),
  launchData: z.string().nullable(),
  maxTimeAllowed: z.string().nullable(),
  timeLimitAction: z.string().nullable(),
  sequencing: z.unknown().nullable().describe('2004 imsss:sequencing of the item, as JSON'),
});
export type ScoDto = z.infer<typeof scoSchema>;

export const packageSchema = z.object({
  id: z.string(),
  lessonId: z.string(),
  version: z.enum(['1.2', '2004']),
  schemaVersion: z.string(),
  manifestIdentifier: z.string(),
  title: z.string(),
  organizationIdentifier: z.string().nullable(),
  organization: z.array(organizationItem),
  sequencing: z.array(z.unknown()).describe('2004: the organization’s sequencing and the sequencingCollection, as JSON'),
  fileCount: z.number().int(),
  totalBytes: z.number().int(),
  scos: z.array(scoSchema),
  uploadedBy: z.string(),
  createdAt: z.string(),
  replacedPackageId: z.string().nullable().describe('the package this upload replaced, if any'),
});
export type PackageDto = z.infer<typeof packageSchema>;

const attemptSummary = z.object({
  id: z.string(),
  number: z.number().int(),
  status: z.enum(['IN_PROGRESS', 'SUSPENDED', 'ENDED']),
  startedAt: z.string(),
});

export const launchSchema = z.object({
  lessonId: z.string(),
  packageId: z.string(),
  version: z.enum(['1.2', '2004']),
  schemaVersion: z.string(),
  title: z.string(),
  launchUrl: z.string().describe('the SCO’s launch file under the content grant: open it in a frame of the player (or use playerUrl)'),
  contentBaseUrl: z.string().describe('the package root under the content grant (ends with /); relative links of the SCO resolve under it'),
  playerUrl: z.string().describe('the launch page: the run-time API adapter and the SCO in a frame'),
  trackUrl: z.string(),
  expiresAt: z.string().describe('until when the content grant is valid'),
  scos: z.array(
    z.object({
      id: z.string(),
      identifier: z.string(),
      title: z.string(),
      scormType: z.enum(['sco', 'asset']),
      isVisible: z.boolean(),
      completed: z.boolean().describe('the caller has a completed attempt at it'),
    }),
  ),
  sco: z.object({ id: z.string(), identifier: z.string(), title: z.string(), scormType: z.enum(['sco', 'asset']) }),
  attempt: attemptSummary.nullable().describe('the attempt this launch continues; null when the first track starts a new one'),
  state: z.object({
    entry: z.enum(['ab-initio', 'resume', '']).describe('1.2 cmi.core.entry / 2004 cmi.entry'),
    mode: z.enum(['normal', 'browse']),
    credit: z.enum(['credit', 'no-credit']),
    location: z.string().describe('1.2 cmi.core.lesson_location / 2004 cmi.location'),
    suspendData: z.string(),
    completionStatus: z.string(),
    successStatus: z.string(),
    scorePercent: z.number().nullable(),
    totalTime: z.string().describe('1.2 CMITimespan / 2004 timeinterval'),
  }),
  cmi: z.record(z.string(), z.string()).describe('every value the SCO may read at launch (element → value), read-only elements included, write-only ones left out'),
});
export type LaunchDto = z.infer<typeof launchSchema>;

const cmiValue = z.union([z.string().max(100_000), z.number()]).describe('a CMI value (SCORM values are strings; numbers are sent as their decimal text)');

export const trackItem = z.object({
  scoId: optionalFilter(z.string().max(500)).describe('the SCO: its id or its manifest item identifier; default: the first SCO, as at launch'),
  attemptId: z.string().min(1).max(200).optional().describe('default: the caller’s open attempt at the SCO, or a new one'),
  values: z
    .record(z.string().min(1).max(255), cmiValue)
    .refine((v) => Object.keys(v).length <= 2000, 'at most 2000 elements in one item')
    .default({})
    .describe('element → value, applied in order (SetValue calls)'),
  terminate: z.boolean().default(false).describe('true for Terminate / LMSFinish: ends the session (session time added, exit applied)'),
});
export type TrackItem = z.infer<typeof trackItem>;

export const trackBody = z.union([trackItem, z.array(trackItem).min(1).max(20)]);
export type TrackBody = z.infer<typeof trackBody>;

export const trackResultSchema = z.object({
  attempts: z.array(
    z.object({
      scoId: z.string(),
      attemptId: z.string(),
      attemptNumber: z.number().int(),
      status: z.enum(['IN_PROGRESS', 'SUSPENDED', 'ENDED']),
      completionStatus: z.string(),
      successStatus: z.string(),
      scorePercent: z.number().nullable(),
      completed: z.boolean(),
      totalTime: z.string(),
      lmsValues: z.record(z.string(), z.string()).describe('status values the LMS determined (mastery score, passing score, completion threshold)'),
    }),
  ),
  lesson: z.object({
    completed: z.boolean(),
    scorePercent: z.number().nullable(),
    progressPercent: z.number(),
    scos: z.number().int(),
    completedScos: z.number().int(),
  }),
  progress: z.object({
    lessonId: z.string(),
    completed: z.boolean(),
    completedAt: z.string().nullable(),
    progressPercent: z.number(),
    progress: z.number().describe('the enrollment’s course progress'),
    status: z.string(),
    courseCompleted: z.boolean(),
    completedNow: z.boolean(),
    certificateId: z
      .string()
      .nullable()
      .describe('the certificate this call issued: at completion, or when it lifted a completed course’s final score to its passing score; else null'),
  }),
});
export type TrackResult = z.infer<typeof trackResultSchema>;

/** The launch page (HTML) and a package file (its bytes), documented per content type. */
export const playerPageSchema = z.string().describe('HTML');
export const contentBytesSchema = z.string().describe('binary');
