import { z } from 'zod';

/**
 * An optional field of a CRM record: absent and null both read as null (spec 2: "optional or
 * absent values are null"), so a CRM that leaves a key out does not fail the whole answer.
 */
const opt = <T extends z.ZodTypeAny>(schema: T) => schema.nullish().transform((v): z.output<T> | null => v ?? null);

/** Records read from the CRM (spec 2.11), validated at the boundary. */
export const contactSchema = z.object({
  id: z.string(),
  firstName: opt(z.string()),
  lastName: opt(z.string()),
  email: opt(z.string()),
  contactType: opt(z.string()),
  status: opt(z.string()),
});
export type CrmContact = z.infer<typeof contactSchema>;

export const studentSchema = z.object({
  id: z.string(),
  contactId: z.string(),
  firstName: opt(z.string()),
  lastName: opt(z.string()),
  studentCode: opt(z.string()),
  currentEnrolment: opt(
    z.object({
      classId: opt(z.string()),
      className: opt(z.string()),
      sectionId: opt(z.string()),
      sectionName: opt(z.string()),
    }),
  ),
});
export type CrmStudent = z.infer<typeof studentSchema>;

export const parentLinkSchema = z.object({
  parentContactId: z.string(),
  email: opt(z.string()),
  name: opt(z.string()),
  relation: opt(z.string()),
  mobile: opt(z.string()),
  isPrimary: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
});
export type CrmParentLink = z.infer<typeof parentLinkSchema>;

export const staffUserSchema = z.object({
  id: z.string(),
  firstName: opt(z.string()),
  lastName: opt(z.string()),
  email: opt(z.string()),
  role: opt(z.string()),
});
export type CrmStaffUser = z.infer<typeof staffUserSchema>;

export const classSchema = z.object({
  id: z.string(),
  name: z.string(),
  year: opt(z.union([z.string(), z.number()])),
  sections: z
    .array(z.object({ id: z.string(), name: z.string() }))
    .nullish()
    .transform((v) => v ?? []),
});
export type CrmClass = z.infer<typeof classSchema>;

export const rosterEntrySchema = z.object({
  studentContactId: z.string(),
  name: opt(z.string()),
  rollNumber: opt(z.union([z.string(), z.number()])),
});
export type CrmRosterEntry = z.infer<typeof rosterEntrySchema>;

export const FEE_STATUSES = ['PAID', 'PARTIAL', 'OVERDUE'] as const;
export const feeStatusSchema = z.object({
  status: z.enum(FEE_STATUSES),
  outstanding: z.number(),
  dueDate: opt(z.string()),
});
export type CrmFeeStatus = z.infer<typeof feeStatusSchema>;

export const childSchema = z.object({
  studentId: z.string(),
  /** Null while the child has no portal Contact row yet (spec 4.6 rule 6). */
  contactId: opt(z.string()),
  name: opt(z.string()),
  email: opt(z.string()),
  studentCode: opt(z.string()),
  class: opt(z.string()),
  section: opt(z.string()),
  photoUrl: opt(z.string()),
  status: opt(z.string()),
  relation: opt(z.string()),
  isPrimary: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
});
export type CrmChild = z.infer<typeof childSchema>;

/** Attendance feed (shape defined by us; the spec leaves it open). */
export const attendanceSchema = z.object({
  studentId: z.string(),
  from: z.string(),
  to: z.string(),
  records: z.array(z.object({ date: z.string(), status: z.enum(['PRESENT', 'ABSENT', 'LATE', 'EXCUSED']) })),
  summary: z.object({ present: z.number(), absent: z.number(), late: z.number(), excused: z.number() }),
});
export type CrmAttendance = z.infer<typeof attendanceSchema>;

/** Completion push body (spec 4.10). */
export interface CompletionPush {
  studentContactId: string;
  courseId: string;
  courseTitle: string;
  completedAt: string;
  /** Null when nothing in the course was scored. */
  finalScore: number | null;
  certificateNumber: string;
}

/** Institution lookup (`GET /api/portal/institutions/{id}`, no envelope; shape defined by us). */
export const institutionLookupSchema = z.object({ id: z.string(), slug: z.string(), name: z.string() });
export type CrmInstitution = z.infer<typeof institutionLookupSchema>;

/**
 * The CRM client the services use. Strict methods throw CrmError; `*OrNull` variants return
 * null on any failure so screens can degrade. `slug` is the institution's CRM tenant label.
 */
export interface CrmClient {
  getContact(slug: string, id: string): Promise<CrmContact>;
  getContactOrNull(slug: string, id: string): Promise<CrmContact | null>;
  getStudent(slug: string, contactId: string): Promise<CrmStudent>;
  getStudentOrNull(slug: string, contactId: string): Promise<CrmStudent | null>;
  getStudentParents(slug: string, contactId: string): Promise<CrmParentLink[]>;
  getUser(slug: string, id: string): Promise<CrmStaffUser>;
  getUserOrNull(slug: string, id: string): Promise<CrmStaffUser | null>;
  getClasses(slug: string, yearId?: string): Promise<CrmClass[]>;
  getSectionRoster(slug: string, sectionId: string): Promise<CrmRosterEntry[]>;
  getFeeStatus(slug: string, studentId: string): Promise<CrmFeeStatus>;
  getAttendance(slug: string, studentId: string, from: string, to: string): Promise<CrmAttendance>;
  getParentChildren(slug: string, parentContactId: string): Promise<CrmChild[]>;
  pushCompletion(slug: string, body: CompletionPush): Promise<void>;
  lookupInstitution(institutionId: string): Promise<CrmInstitution | null>;
  /** Display name for a person id: contact lookup, then staff user; null when unknown or CRM down. */
  displayNameOrNull(slug: string, personId: string): Promise<string | null>;
  /** Releases keep-alive connections and the cache's connection (optional for test doubles). */
  close?(): Promise<void>;
}
