import type {
  CrmAttendance,
  CrmChild,
  CrmClass,
  CrmContact,
  CrmFeeStatus,
  CrmInstitution,
  CrmParentLink,
  CrmRosterEntry,
  CrmStaffUser,
  CrmStudent,
} from '../../platform/crm/types.js';

/**
 * Deterministic CRM data served by the simulator (DESIGN.md §5). Nothing here is random, so
 * tests and the demo can name people by id. Layout of each institution:
 *
 * - staff users `u_<slug>_admin` (ADMIN), `u_<slug>_teacher` and `u_<slug>_teacher2` (TEACHER);
 * - 30 students, contacts `c_<slug>_stu_01` … `c_<slug>_stu_30`, student records
 *   `s_<slug>_01` …; 3 classes × 2 sections, 5 students a section, in id order:
 *   01–05 Grade 6 A, 06–10 Grade 6 B, 11–15 Grade 7 A, 16–20 Grade 7 B, 21–25 Grade 8 A, 26–30 Grade 8 B;
 * - parents: `c_<slug>_par_01` is the primary parent of students 01 and 02 (two children);
 *   `c_<slug>_par_02` … `c_<slug>_par_29` each have one child (students 03 … 30);
 *   `c_<slug>_par_30` is a second, non-primary guardian of student 01;
 * - fee status: student 03 is OVERDUE, student 02 is PARTIAL, everyone else PAID;
 * - attendance: weekdays only, derived from a fixed hash of (student, date); student 03 is
 *   absent more often than the others.
 */

export const DEMO_INSTITUTION: CrmInstitution = { id: 'inst_demo', slug: 'demo', name: 'Demo Academy' };
export const SECOND_INSTITUTION: CrmInstitution = { id: 'inst_north', slug: 'northside', name: 'Northside College' };
export const CRM_INSTITUTIONS: CrmInstitution[] = [DEMO_INSTITUTION, SECOND_INSTITUTION];

/** The academic year the classes belong to; also the value `?yearId=` filters on. */
export const CRM_YEAR_ID = '2025-2026';

export const STUDENTS_PER_INSTITUTION = 30;

const pad = (n: number) => String(n).padStart(2, '0');
const studentContactId = (slug: string, n: number) => `c_${slug}_stu_${pad(n)}`;
const parentContactId = (slug: string, n: number) => `c_${slug}_par_${pad(n)}`;

// ---- named ids (demo institution) ----
export const DEMO_ADMIN_ID = 'u_demo_admin';
export const DEMO_TEACHER_ID = 'u_demo_teacher';
export const DEMO_TEACHER2_ID = 'u_demo_teacher2';
/** Student 01 of the demo institution: fees PAID, two parents (par_01 primary, par_30). */
export const DEMO_STUDENT_ID = studentContactId('demo', 1);
/** Student 02: sibling of DEMO_STUDENT_ID (same parent), fees PARTIAL. */
export const DEMO_SIBLING_ID = studentContactId('demo', 2);
/** Primary parent of students 01 and 02. */
export const DEMO_PARENT_ID = parentContactId('demo', 1);
/** Non-primary guardian of student 01 only. */
export const DEMO_SECOND_GUARDIAN_ID = parentContactId('demo', 30);
export const PAID_STUDENT_ID = DEMO_STUDENT_ID;
export const PARTIAL_STUDENT_ID = DEMO_SIBLING_ID;
/** The only demo student whose fees are OVERDUE (fee gating blocks them). */
export const OVERDUE_STUDENT_ID = studentContactId('demo', 3);
/** A demo student not linked to DEMO_PARENT_ID (parent access must be refused). */
export const DEMO_UNRELATED_STUDENT_ID = studentContactId('demo', 10);
export const DEMO_CLASS_ID = 'cls_demo_g6';
export const DEMO_SECTION_ID = 'sec_demo_g6_a';

// ---- named ids (second institution) ----
export const NORTH_ADMIN_ID = 'u_northside_admin';
export const NORTH_TEACHER_ID = 'u_northside_teacher';
export const NORTH_STUDENT_ID = studentContactId('northside', 1);
export const NORTH_PARENT_ID = parentContactId('northside', 1);
export const NORTH_OVERDUE_STUDENT_ID = studentContactId('northside', 3);

/** A student with everything the simulator knows about them. */
export interface FixtureStudent {
  contact: CrmContact;
  student: CrmStudent;
  rollNumber: number;
  feeStatus: CrmFeeStatus;
  /** Parent links, primary first. */
  parents: CrmParentLink[];
}

export interface FixtureParent {
  contact: CrmContact;
  mobile: string;
  children: Array<{ studentContactId: string; relation: string; isPrimary: boolean }>;
}

export interface InstitutionFixtures {
  institution: CrmInstitution;
  admin: CrmStaffUser;
  teacher: CrmStaffUser;
  staff: CrmStaffUser[];
  classes: CrmClass[];
  students: FixtureStudent[];
  parents: FixtureParent[];
}

const FIRST_NAMES = [
  'Ava',
  'Liam',
  'Maya',
  'Noah',
  'Zara',
  'Ethan',
  'Iris',
  'Omar',
  'Lena',
  'Arjun',
  'Chloe',
  'Mateo',
  'Priya',
  'Felix',
  'Hana',
  'Diego',
  'Nora',
  'Kai',
  'Amara',
  'Leo',
  'Sofia',
  'Yusuf',
  'Elena',
  'Ravi',
  'Mila',
  'Jonas',
  'Aisha',
  'Theo',
  'Ines',
  'Sami',
];
const LAST_NAMES = [
  'Patel',
  'Nguyen',
  'Garcia',
  'Okafor',
  'Schmidt',
  'Kim',
  'Rossi',
  'Haddad',
  'Silva',
  'Kowalski',
  'Tanaka',
  'Mensah',
  'Dubois',
  'Larsen',
  'Costa',
  'Ibrahim',
  'Murphy',
  'Novak',
  'Sato',
  'Fischer',
];
const PARENT_FIRST_NAMES = [
  'Anita',
  'Brian',
  'Carmen',
  'David',
  'Esther',
  'Farid',
  'Grace',
  'Hassan',
  'Irene',
  'James',
  'Kiran',
  'Laura',
  'Miguel',
  'Nadia',
  'Oscar',
  'Paula',
  'Quentin',
  'Rosa',
  'Stefan',
  'Tara',
  'Umar',
  'Vera',
  'Walter',
  'Xenia',
  'Yara',
  'Zoltan',
  'Alice',
  'Bruno',
  'Celia',
  'Dmitri',
];

const CLASS_LAYOUT = [
  { key: 'g6', name: 'Grade 6' },
  { key: 'g7', name: 'Grade 7' },
  { key: 'g8', name: 'Grade 8' },
];
const SECTION_LAYOUT = [
  { key: 'a', name: 'A' },
  { key: 'b', name: 'B' },
];
const STUDENTS_PER_SECTION = 5;

/** Student n of an institution seated in `section` of `cls`: its Contact and Student records, no parents yet. */
function studentOf(slug: string, n: number, firstName: string, lastName: string, address: string, cls: CrmClass, section: { id: string; name: string }) {
  const contactId = studentContactId(slug, n);
  return {
    contact: { id: contactId, firstName, lastName, email: address, contactType: 'CONTACT_STUDENT' as const, status: 'ACTIVE' as const },
    student: {
      id: `s_${slug}_${pad(n)}`,
      contactId,
      firstName,
      lastName,
      studentCode: `${slug.slice(0, 3).toUpperCase()}-2025-${pad(n)}`,
      currentEnrolment: { classId: cls.id, className: cls.name, sectionId: section.id, sectionName: section.name },
    },
    parents: [] as FixtureStudent['parents'],
  };
}

function buildInstitution(institution: CrmInstitution, nameOffset: number): InstitutionFixtures {
  const slug = institution.slug;
  const mailDomain = `${slug}.example`;
  const email = (first: string, last: string) => `${first}.${last}@${mailDomain}`.toLowerCase();

  const staff: CrmStaffUser[] = [
    { id: `u_${slug}_admin`, firstName: 'Morgan', lastName: 'Reyes', email: email('morgan', 'reyes'), role: 'ADMIN' },
    { id: `u_${slug}_teacher`, firstName: 'Taylor', lastName: 'Brooks', email: email('taylor', 'brooks'), role: 'TEACHER' },
    { id: `u_${slug}_teacher2`, firstName: 'Jordan', lastName: 'Ellis', email: email('jordan', 'ellis'), role: 'TEACHER' },
  ];

  const classes: CrmClass[] = CLASS_LAYOUT.map((c) => ({
    id: `cls_${slug}_${c.key}`,
    name: c.name,
    year: CRM_YEAR_ID,
    sections: SECTION_LAYOUT.map((s) => ({ id: `sec_${slug}_${c.key}_${s.key}`, name: s.name })),
  }));

  const students: FixtureStudent[] = [];
  for (let n = 1; n <= STUDENTS_PER_INSTITUTION; n++) {
    const seat = n - 1;
    const cls = classes[Math.floor(seat / (STUDENTS_PER_SECTION * SECTION_LAYOUT.length))];
    const section = cls.sections[Math.floor(seat / STUDENTS_PER_SECTION) % SECTION_LAYOUT.length];
    const firstName = FIRST_NAMES[(seat + nameOffset) % FIRST_NAMES.length];
    const lastName = LAST_NAMES[(seat * 7 + nameOffset) % LAST_NAMES.length];
    students.push({
      ...studentOf(slug, n, firstName, lastName, email(firstName, lastName), cls, section),
      rollNumber: (seat % STUDENTS_PER_SECTION) + 1,
      feeStatus: feeStatusFor(n),
    });
  }

  // Parent n (2…29) has one child, student n+1; parent 01 has students 01 and 02;
  // parent 30 is a second guardian of student 01.
  const parents: FixtureParent[] = [];
  for (let n = 1; n <= STUDENTS_PER_INSTITUTION; n++) {
    const children =
      n === 1
        ? [1, 2].map((s) => ({ studentContactId: studentContactId(slug, s), relation: 'MOTHER', isPrimary: true }))
        : n === STUDENTS_PER_INSTITUTION
          ? [{ studentContactId: studentContactId(slug, 1), relation: 'FATHER', isPrimary: false }]
          : [{ studentContactId: studentContactId(slug, n + 1), relation: n % 2 === 0 ? 'FATHER' : 'MOTHER', isPrimary: true }];
    const firstName = PARENT_FIRST_NAMES[(n - 1 + nameOffset) % PARENT_FIRST_NAMES.length];
    // A parent shares the family name of their (first) child.
    const firstChild = students.find((s) => s.contact.id === children[0].studentContactId)!;
    const lastName = firstChild.contact.lastName!;
    parents.push({
      contact: {
        id: parentContactId(slug, n),
        firstName,
        lastName,
        email: email(firstName, lastName),
        contactType: 'CONTACT_PARENT',
        status: 'ACTIVE',
      },
      mobile: `+1555${String(1000000 + n * 7919 + nameOffset).slice(-7)}`,
      children,
    });
  }

  for (const parent of parents) {
    for (const child of parent.children) {
      const student = students.find((s) => s.contact.id === child.studentContactId)!;
      student.parents.push({
        parentContactId: parent.contact.id,
        email: parent.contact.email,
        name: `${parent.contact.firstName} ${parent.contact.lastName}`,
        relation: child.relation,
        mobile: parent.mobile,
        isPrimary: child.isPrimary,
      });
    }
  }
  for (const s of students) s.parents.sort((a, b) => Number(b.isPrimary) - Number(a.isPrimary));

  return { institution, admin: staff[0], teacher: staff[1], staff, classes, students, parents };
}

function feeStatusFor(n: number): CrmFeeStatus {
  if (n === 3) return { status: 'OVERDUE', outstanding: 1250, dueDate: '2026-01-15' };
  if (n === 2) return { status: 'PARTIAL', outstanding: 400, dueDate: '2026-04-30' };
  return { status: 'PAID', outstanding: 0, dueDate: null };
}

/**
 * Students beyond the fixed 30, for load runs (`startCrmSim({ students })`, `CRM_SIM_STUDENTS`):
 * `c_<slug>_stu_31`, `_32`, … continue the numbering, seated round-robin in the six sections,
 * fees PAID, no parents, each with an address of their own. The fixed 30 are unchanged.
 */
export function addStudents(f: InstitutionFixtures, total: number): void {
  const slug = f.institution.slug;
  const sections = f.classes.flatMap((c) => c.sections.map((s) => ({ cls: c, section: s })));
  for (let n = f.students.length + 1; n <= total; n++) {
    const seat = n - 1;
    const { cls, section } = sections[seat % sections.length];
    const firstName = FIRST_NAMES[seat % FIRST_NAMES.length];
    const lastName = LAST_NAMES[(seat * 7) % LAST_NAMES.length];
    f.students.push({
      ...studentOf(slug, n, firstName, lastName, `${firstName}.${lastName}.${n}@${slug}.example`.toLowerCase(), cls, section),
      rollNumber: Math.floor(seat / sections.length) + 1,
      feeStatus: { status: 'PAID', outstanding: 0, dueDate: null },
    });
  }
}

/** Fixture data by institution id. Treat as read-only; the simulator works on its own copy. */
export const crmFixtures: Record<string, InstitutionFixtures> = {
  [DEMO_INSTITUTION.id]: buildInstitution(DEMO_INSTITUTION, 0),
  [SECOND_INSTITUTION.id]: buildInstitution(SECOND_INSTITUTION, 11),
};

export const demoFixtures = crmFixtures[DEMO_INSTITUTION.id];
export const northFixtures = crmFixtures[SECOND_INSTITUTION.id];

// ---- derived views, the shapes the CRM endpoints answer with ----

/** A student by Contact id or by student record id. */
export function findStudent(f: InstitutionFixtures, id: string): FixtureStudent | undefined {
  return f.students.find((s) => s.contact.id === id || s.student.id === id);
}

export function findContact(f: InstitutionFixtures, id: string): CrmContact | undefined {
  return f.students.find((s) => s.contact.id === id)?.contact ?? f.parents.find((p) => p.contact.id === id)?.contact;
}

export function sectionRoster(f: InstitutionFixtures, sectionId: string): CrmRosterEntry[] | undefined {
  if (!f.classes.some((c) => c.sections.some((s) => s.id === sectionId))) return undefined;
  return f.students
    .filter((s) => s.student.currentEnrolment?.sectionId === sectionId)
    .map((s) => ({
      studentContactId: s.contact.id,
      name: `${s.contact.firstName} ${s.contact.lastName}`,
      rollNumber: s.rollNumber,
    }));
}

export function parentChildren(f: InstitutionFixtures, parentId: string): CrmChild[] | undefined {
  const parent = f.parents.find((p) => p.contact.id === parentId);
  if (!parent) return undefined;
  return parent.children.map((link) => {
    const s = findStudent(f, link.studentContactId)!;
    return {
      studentId: s.student.id,
      contactId: s.contact.id,
      name: `${s.contact.firstName} ${s.contact.lastName}`,
      email: s.contact.email,
      studentCode: s.student.studentCode,
      class: s.student.currentEnrolment?.className ?? null,
      section: s.student.currentEnrolment?.sectionName ?? null,
      photoUrl: null,
      status: s.contact.status,
      relation: link.relation,
      isPrimary: link.isPrimary,
    };
  });
}

const DAY_MS = 86_400_000;
/** Longest attendance window answered, so a wild range cannot make the simulator spin. */
export const MAX_ATTENDANCE_DAYS = 400;

/**
 * Attendance for a student over [from, to] (YYYY-MM-DD, inclusive), weekdays only.
 * A fixed hash of (student, day) picks the status, so the same range always answers the same.
 */
export function attendanceFor(student: FixtureStudent, from: string, to: string): CrmAttendance {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Math.min(Date.parse(`${to}T00:00:00Z`), start + (MAX_ATTENDANCE_DAYS - 1) * DAY_MS);
  const records: CrmAttendance['records'] = [];
  const summary = { present: 0, absent: 0, late: 0, excused: 0 };
  const seed = hash(student.contact.id);
  const absentEvery = student.feeStatus.status === 'OVERDUE' ? 4 : 17;
  for (let t = start; t <= end; t += DAY_MS) {
    const day = new Date(t);
    const weekday = day.getUTCDay();
    if (weekday === 0 || weekday === 6) continue;
    const h = hash(`${seed}:${t / DAY_MS}`);
    const status = h % absentEvery === 0 ? 'ABSENT' : h % 23 === 1 ? 'LATE' : h % 41 === 2 ? 'EXCUSED' : 'PRESENT';
    records.push({ date: day.toISOString().slice(0, 10), status });
    summary[status.toLowerCase() as keyof typeof summary] += 1;
  }
  return { studentId: student.contact.id, from, to, records, summary };
}

/** FNV-1a, 32 bit: small, stable across runs and platforms. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
