import { foreignKey, index, integer, jsonb, pgTable, text, timestamp, unique } from 'drizzle-orm/pg-core';
import { courses } from '../courses/courses.tables.js';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The roles a training can target: STUDENT (every class's roster in the CRM), TEACHER and ADMIN
 * (assigned when they read their records). A PARENT never has records of their own.
 */
export const ASSIGNABLE_ROLES = ['STUDENT', 'TEACHER', 'ADMIN'] as const;

/** A required course for classes, sections and/or roles, due by a date, optionally every N months. */
export const complianceTrainings = pgTable(
  'compliance_trainings',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    courseId: text('course_id').notNull(),
    title: text('title').notNull(),
    classIds: jsonb('class_ids').$type<string[]>().notNull().default([]),
    sectionIds: jsonb('section_ids').$type<string[]>().notNull().default([]),
    roles: jsonb('roles').$type<string[]>().notNull().default([]),
    dueDate: ts('due_date').notNull(),
    recurrenceMonths: integer('recurrence_months'),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('compliance_trainings_inst_id_uq').on(t.institutionId, t.id),
    foreignKey({ name: 'compliance_trainings_course_fk', columns: [t.institutionId, t.courseId], foreignColumns: [courses.institutionId, courses.id] }).onDelete('cascade'),
  ],
);

/**
 * One person's obligation in one cycle of a training. The status is derived when read (and by
 * the hourly sweep): WAIVED when waived, COMPLETED when the course was completed since the
 * cycle began, OVERDUE past `due_at`, else ASSIGNED. A recurring training opens the next cycle
 * `recurrence_months` after a completion.
 */
export const complianceRecords = pgTable(
  'compliance_records',
  {
    institutionId: text('institution_id').notNull(),
    id: text('id').primaryKey(),
    trainingId: text('training_id').notNull(),
    personId: text('person_id').notNull(),
    /** The class and section the person was assigned through (from the CRM roster), for staff filters. */
    classId: text('class_id'),
    sectionId: text('section_id'),
    cycle: integer('cycle').notNull().default(1),
    assignedAt: ts('assigned_at').notNull(),
    dueAt: ts('due_at').notNull(),
    completedAt: ts('completed_at'),
    waivedAt: ts('waived_at'),
    waivedBy: text('waived_by'),
    waiveReason: text('waive_reason'),
    remindedAt: ts('reminded_at'),
    overdueNotifiedAt: ts('overdue_notified_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    unique('compliance_records_inst_id_uq').on(t.institutionId, t.id),
    unique('compliance_records_cycle_uq').on(t.institutionId, t.trainingId, t.personId, t.cycle),
    foreignKey({
      name: 'compliance_records_training_fk',
      columns: [t.institutionId, t.trainingId],
      foreignColumns: [complianceTrainings.institutionId, complianceTrainings.id],
    }).onDelete('cascade'),
    index('compliance_records_person_idx').on(t.institutionId, t.personId),
  ],
);

export type ComplianceTraining = typeof complianceTrainings.$inferSelect;
export type ComplianceRecord = typeof complianceRecords.$inferSelect;
export const COMPLIANCE_STATUSES = ['ASSIGNED', 'COMPLETED', 'OVERDUE', 'WAIVED'] as const;
export type ComplianceStatus = (typeof COMPLIANCE_STATUSES)[number];
