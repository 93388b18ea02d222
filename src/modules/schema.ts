/**
 * Every table, in one schema for drizzle-kit (drizzle.config.ts) and for `openDatabase({ schema })`
 * when relational queries are wanted. Lives outside platform/: platform imports no module.
 */
export * from '../platform/queue/queue.tables.js';
export * from './institutions/institutions.tables.js';
export * from './courses/courses.tables.js';
export * from './enrollments/enrollments.tables.js';
export * from './certificates/certificates.tables.js';
export * from './sync/sync.tables.js';
export * from './notes/notes.tables.js';
export * from './quizzes/quizzes.tables.js';
export * from './captions/captions.tables.js';
export * from './files/files.tables.js';
export * from './notifications/notifications.tables.js';
export * from './analytics/analytics.tables.js';
export * from './assignments/assignments.tables.js';
export * from './gamification/gamification.tables.js';
export * from './learning-paths/learning-paths.tables.js';
export * from './compliance/compliance.tables.js';
export * from './live-sessions/live-sessions.tables.js';
export * from './audit/audit.tables.js';
export * from './announcements/announcements.tables.js';
export * from './discussions/discussions.tables.js';
export * from './reviews/reviews.tables.js';
export * from './scorm/scorm.tables.js';
export * from './xapi/xapi.tables.js';
