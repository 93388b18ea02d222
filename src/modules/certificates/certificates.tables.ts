import { boolean, foreignKey, index, pgTable, real, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { enrollments } from '../enrollments/enrollments.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const certificates = pgTable(
  'certificates',
  {
    id: text('id').primaryKey(),
    institutionId: text('institution_id').notNull(),
    courseId: text('course_id').notNull(),
    enrollmentId: text('enrollment_id').notNull(),
    studentId: text('student_id').notNull(),
    courseTitle: text('course_title').notNull(),
    certificateNumber: text('certificate_number').notNull(),
    /** Public code for verification; unguessable. */
    verificationCode: text('verification_code').notNull(),
    finalScore: real('final_score'),
    pdfKey: text('pdf_key'),
    /** The PDF at pdfKey names no holder (the CRM did not answer): rendered again once it does. */
    pdfProvisional: boolean('pdf_provisional').notNull().default(false),
    issuedAt: ts('issued_at').notNull(),
    expiresAt: ts('expires_at'),
  },
  (t) => [
    unique('certificates_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'certificates_enrollment_fk', columns: [t.institutionId, t.enrollmentId], foreignColumns: [enrollments.institutionId, enrollments.id] }).onDelete('cascade'),
    uniqueIndex('certificates_enrollment_uq').on(t.institutionId, t.enrollmentId),
    uniqueIndex('certificates_code_uq').on(t.verificationCode),
    uniqueIndex('certificates_number_uq').on(t.institutionId, t.certificateNumber),
    index('certificates_inst_student_idx').on(t.institutionId, t.studentId),
  ],
);

export type Certificate = typeof certificates.$inferSelect;
