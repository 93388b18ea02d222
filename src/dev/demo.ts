import type { Config } from '../config.js';
import { mintToken, type MintInput, type Role } from '../platform/auth/tokens.js';
import { CRM_INSTITUTIONS, crmFixtures, DEMO_ADMIN_ID, DEMO_INSTITUTION, DEMO_PARENT_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID } from './crm-sim/fixtures.js';

export interface DemoLogin {
  label: string;
  role: Role;
  personId: string;
  token: string;
}

/** A person of the CRM simulator one can sign in as in development. */
export interface DemoPerson {
  personId: string;
  name: string;
  role: Role;
  institutionId: string;
  institutionName: string;
  /** Class and section of a student, the children of a parent. */
  detail: string | null;
}

const fullName = (p: { firstName: string | null; lastName: string | null }) => [p.firstName, p.lastName].filter(Boolean).join(' ');

/** Everyone of the simulator's institutions: staff first, then students, then parents. */
export function demoPeople(): DemoPerson[] {
  const people: DemoPerson[] = [];
  for (const inst of CRM_INSTITUTIONS) {
    const f = crmFixtures[inst.id];
    const base = { institutionId: inst.id, institutionName: inst.name };
    for (const s of f.staff) people.push({ ...base, personId: s.id, name: fullName(s), role: s.role === 'ADMIN' ? 'ADMIN' : 'TEACHER', detail: null });
    for (const s of f.students) {
      const e = s.student.currentEnrolment;
      people.push({ ...base, personId: s.contact.id, name: fullName(s.contact), role: 'STUDENT', detail: e ? `${e.className ?? ''} ${e.sectionName ?? ''}`.trim() : null });
    }
    for (const p of f.parents) {
      const children = p.children.map((c) => fullName(f.students.find((s) => s.contact.id === c.studentContactId)!.contact));
      people.push({ ...base, personId: p.contact.id, name: fullName(p.contact), role: 'PARENT', detail: `parent of ${children.join(', ')}` });
    }
  }
  return people;
}

/** The session claims of a demo person, as the CRM's Auth.js session would carry them. */
export function demoClaims(person: Pick<DemoPerson, 'personId' | 'role' | 'institutionId' | 'name'>): MintInput {
  const contactType = person.role === 'STUDENT' ? 'CONTACT_STUDENT' : person.role === 'PARENT' ? 'CONTACT_PARENT' : undefined;
  return {
    sub: person.personId,
    institutionId: person.institutionId,
    role: person.role,
    name: person.name,
    ...(contactType ? { contactId: person.personId, isContact: true, contactType } : {}),
  };
}

/** Tokens for the simulator's demo institution, printed by `npm start`. */
export async function demoLogins(config: Config): Promise<DemoLogin[]> {
  const picks: Array<{ label: string; id: string }> = [
    { label: 'student', id: DEMO_STUDENT_ID },
    { label: 'teacher', id: DEMO_TEACHER_ID },
    { label: 'admin', id: DEMO_ADMIN_ID },
    { label: 'parent', id: DEMO_PARENT_ID },
  ];
  const people = demoPeople().filter((p) => p.institutionId === DEMO_INSTITUTION.id);
  return Promise.all(
    picks.map(async ({ label, id }) => {
      const person = people.find((p) => p.personId === id)!;
      return { label, role: person.role, personId: id, token: await mintToken(config.AUTH_SECRET, demoClaims(person)) };
    }),
  );
}
