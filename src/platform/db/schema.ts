/** Every module's tables, in one schema for Drizzle and drizzle-kit. */
export * from '../../modules/institutions/institutions.tables.js';
export * from '../queue/queue.tables.js';
export * from '../../modules/courses/courses.tables.js';
export * from '../../modules/enrollments/enrollments.tables.js';
export * from '../../modules/certificates/certificates.tables.js';
export * from '../../modules/sync/sync.tables.js';
export * from '../../modules/notes/notes.tables.js';
export * from '../../modules/captions/captions.tables.js';
export * from '../../modules/files/files.tables.js';
