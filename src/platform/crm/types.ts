import { z } from 'zod';

/** Records read from the CRM (spec 2.11), validated at the boundary. */
export const contactSchema = z.object({
  id: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
  contactType: z.string().nullable(),
  status: z.string().nullable(),
});
export type CrmContact = z.infer<typeof contactSchema>;

export const studentSchema = z.object({
  id: z.string(),
  contactId: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  studentCode: z.string().nullable(),
  currentEnrolment: z
    .object({
      classId: z.string().nullable(),
      className: z.string().nullable(),
      sectionId: z.string().nullable(),
      sectionName: z.string().nullable(),
    })
    .nullable(),
});
export type CrmStudent = z.infer<typeof studentSchema>;

export const parentLinkSchema = z.object({
  parentContactId: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  relation: z.string().nullable(),
  mobile: z.string().nullable(),
  isPrimary: z.boolean(),
});
export type CrmParentLink = z.infer<typeof parentLinkSchema>;

export const staffUserSchema = z.object({
  id: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
  role: z.string().nullable(),
});
export type CrmStaffUser = z.infer<typeof staffUserSchema>;

export const classSchema = z.object({
  id: z.string(),
  name: z.string(),
  year: z.union([z.string(), z.number()]).nullable(),
  sections: z.array(z.object({ id: z.string(), name: z.string() })),
});
export type CrmClass = z.infer<typeof classSchema>;

export const rosterEntrySchema = z.object({
  studentContactId: z.string(),
  name: z.string().nullable(),
  rollNumber: z.union([z.string(), z.number()]).nullable(),
});
export type CrmRosterEntry = z.infer<typeof rosterEntrySchema>;

export const FEE_STATUSES = ['PAID', 'PARTIAL', 'OVERDUE'] as const;
export const feeStatusSchema = z.object({
  status: z.enum(FEE_STATUSES),
  outstanding: z.number(),
  dueDate: z.string().nullable(),
});
export type CrmFeeStatus = z.infer<typeof feeStatusSchema>;

export const childSchema = z.object({
  studentId: z.string(),
  contactId: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  studentCode: z.string().nullable(),
  class: z.string().nullable(),
  section: z.string().nullable(),
  photoUrl: z.string().nullable(),
  status: z.string().nullable(),
  relation: z.string().nullable(),
  isPrimary: z.boolean(),
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
  /** The average of the course's scores; 100 when nothing in the course was scored. */
  finalScore: number;
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
