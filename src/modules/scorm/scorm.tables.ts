import { sql } from 'drizzle-orm';
import { bigint, boolean, foreignKey, index, integer, jsonb, pgTable, real, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { lessons } from '../courses/courses.tables.js';
import { enrollments } from '../enrollments/enrollments.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const SCORM_VERSIONS = ['1.2', '2004'] as const;
export type ScormVersion = (typeof SCORM_VERSIONS)[number];

/** CURRENT: the package a SCORM lesson launches (one per lesson). REPLACED: an earlier upload, kept for its attempts. */
export const PACKAGE_STATUSES = ['CURRENT', 'REPLACED'] as const;

/**
 * IN_PROGRESS: tracked, not terminated (or terminated with an empty exit before completion): the next
 * launch continues it (entry ""). SUSPENDED: terminated with exit "suspend": the next launch resumes it.
 * ENDED: terminated with a normal exit (or an empty one once completed, passed or failed): the next
 * launch starts a new attempt (entry "ab-initio").
 */
export const SCORM_ATTEMPT_STATUSES = ['IN_PROGRESS', 'SUSPENDED', 'ENDED'] as const;
export type ScormAttemptStatus = (typeof SCORM_ATTEMPT_STATUSES)[number];

/** A JSON copy of an XML element (2004 sequencing kept as data): namespace-free name, attributes, text, children. */
export interface XmlData {
  name: string;
  attributes?: Record<string, string>;
  text?: string;
  children?: XmlData[];
}

/** An item of the organization tree, as the manifest nests it. */
export interface OrganizationItem {
  identifier: string;
  title: string;
  /** The SCO row's identifier when the item launches something. */
  launchable: boolean;
  isVisible: boolean;
  children: OrganizationItem[];
}

/**
 * An uploaded SCORM package of a SCORM lesson (the lesson's id is `lesson_id`). The files live in
 * storage, one object each (`scorm_package_files`); the manifest's organization tree and the 2004
 * sequencing of the organization are kept as JSON.
 */
export const scormPackages = pgTable(
  'scorm_packages',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    status: text('status', { enum: PACKAGE_STATUSES }).notNull().default('CURRENT'),
    version: text('version', { enum: SCORM_VERSIONS }).notNull(),
    /** schemaversion as the manifest says it ("1.2", "2004 4th Edition", "CAM 1.3"…), or the version. */
    schemaVersion: text('schema_version').notNull(),
    manifestIdentifier: text('manifest_identifier').notNull(),
    title: text('title').notNull(),
    organizationIdentifier: text('organization_identifier'),
    organization: jsonb('organization').$type<OrganizationItem[]>().notNull().default([]),
    /** 2004: the organization's imsss:sequencing and the manifest's sequencingCollection, as data. */
    sequencing: jsonb('sequencing').$type<XmlData[]>().notNull().default([]),
    fileCount: integer('file_count').notNull(),
    totalBytes: bigint('total_bytes', { mode: 'number' }).notNull(),
    uploadedBy: text('uploaded_by').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    unique('scorm_packages_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'scorm_packages_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    uniqueIndex('scorm_packages_current_uq')
      .on(t.institutionId, t.lessonId)
      .where(sql`status = 'CURRENT'`),
  ],
);

/**
 * A launchable item of a package's default organization: its resource's launch path (xml:base and
 * item parameters applied), SCO or asset, and what the LMS gives the SCO at launch.
 */
export const scormScos = pgTable(
  'scorm_scos',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    packageId: text('package_id').notNull(),
    /** The item's identifier in the manifest. */
    identifier: text('identifier').notNull(),
    resourceIdentifier: text('resource_identifier').notNull(),
    title: text('title').notNull(),
    /** Document order within the organization, from 0. */
    position: integer('position').notNull(),
    /** The file the launch opens, relative to the package root (no query). */
    launchPath: text('launch_path').notNull(),
    /** Query string and/or fragment the launch URL carries ("?a=1#x"), from the href and the item's parameters. */
    launchQuery: text('launch_query').notNull().default(''),
    scormType: text('scorm_type', { enum: ['sco', 'asset'] }).notNull(),
    isVisible: boolean('is_visible').notNull().default(true),
    /** 1.2 adlcp:masteryscore (0–100). */
    masteryScore: real('mastery_score'),
    /** 2004 cmi.scaled_passing_score: the primary objective's minNormalizedMeasure when satisfiedByMeasure. */
    scaledPassingScore: real('scaled_passing_score'),
    /** 2004 adlcp:completionThreshold (minProgressMeasure). */
    completionThreshold: real('completion_threshold'),
    /** adlcp:datafromlms / dataFromLMS → cmi.launch_data. */
    launchData: text('launch_data'),
    /** 1.2 adlcp:maxtimeallowed (CMITimespan) / 2004 attemptAbsoluteDurationLimit (timeinterval). */
    maxTimeAllowed: text('max_time_allowed'),
    timeLimitAction: text('time_limit_action'),
    /** 2004 imsss:sequencing of the item, as data. */
    sequencing: jsonb('sequencing').$type<XmlData | null>(),
  },
  (t) => [
    unique('scorm_scos_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'scorm_scos_package_fk', columns: [t.institutionId, t.packageId], foreignColumns: [scormPackages.institutionId, scormPackages.id] }).onDelete('cascade'),
    uniqueIndex('scorm_scos_package_identifier_uq').on(t.institutionId, t.packageId, t.identifier),
  ],
);

/** The files of a package: the path inside the zip → the storage object that holds it. */
export const scormPackageFiles = pgTable(
  'scorm_package_files',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    packageId: text('package_id').notNull(),
    path: text('path').notNull(),
    storageKey: text('storage_key').notNull(),
    contentType: text('content_type').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
  },
  (t) => [
    unique('scorm_package_files_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'scorm_package_files_package_fk', columns: [t.institutionId, t.packageId], foreignColumns: [scormPackages.institutionId, scormPackages.id] }).onDelete(
      'cascade',
    ),
    uniqueIndex('scorm_package_files_path_uq').on(t.institutionId, t.packageId, t.path),
  ],
);

/**
 * One learner attempt at one SCO: the CMI data model values the SCO stored (element → value, as
 * strings), and what was derived from them for progress. Numbered per learner and SCO from 1.
 */
export const scormAttempts = pgTable(
  'scorm_attempts',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    packageId: text('package_id').notNull(),
    scoId: text('sco_id').notNull(),
    lessonId: text('lesson_id').notNull(),
    enrollmentId: text('enrollment_id').notNull(),
    studentId: text('student_id').notNull(),
    attemptNumber: integer('attempt_number').notNull(),
    status: text('status', { enum: SCORM_ATTEMPT_STATUSES }).notNull().default('IN_PROGRESS'),
    cmi: jsonb('cmi').$type<Record<string, string>>().notNull().default({}),
    /** 2004 completion_status, or 1.2 lesson_status mapped onto it. */
    completionStatus: text('completion_status').notNull(),
    /** 2004 success_status, or 1.2 lesson_status mapped onto it. */
    successStatus: text('success_status').notNull(),
    /** The score as a percentage 0–100 (2004 scaled × 100, else raw within min..max), or null. */
    scorePercent: real('score_percent'),
    /** Completed by the lesson rule (README "SCORM"); sticky. */
    completed: boolean('completed').notNull().default(false),
    /** Sum of the session times of terminated sessions. */
    totalTimeSeconds: real('total_time_seconds').notNull().default(0),
    lastExit: text('last_exit'),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('scorm_attempts_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'scorm_attempts_package_fk', columns: [t.institutionId, t.packageId], foreignColumns: [scormPackages.institutionId, scormPackages.id] }).onDelete('cascade'),
    foreignKey({ name: 'scorm_attempts_sco_fk', columns: [t.institutionId, t.scoId], foreignColumns: [scormScos.institutionId, scormScos.id] }).onDelete('cascade'),
    foreignKey({ name: 'scorm_attempts_lesson_fk', columns: [t.institutionId, t.lessonId], foreignColumns: [lessons.institutionId, lessons.id] }).onDelete('cascade'),
    foreignKey({ name: 'scorm_attempts_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete(
      'cascade',
    ),
    uniqueIndex('scorm_attempts_number_uq').on(t.institutionId, t.scoId, t.studentId, t.attemptNumber),
    index('scorm_attempts_student_package_idx').on(t.institutionId, t.packageId, t.studentId),
  ],
);

export type ScormPackage = typeof scormPackages.$inferSelect;
export type ScormSco = typeof scormScos.$inferSelect;
export type ScormPackageFile = typeof scormPackageFiles.$inferSelect;
export type ScormAttempt = typeof scormAttempts.$inferSelect;
