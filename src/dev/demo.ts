import type { Config } from '../config.js';
import { mintToken, type Role } from '../platform/auth/tokens.js';
import { DEMO_ADMIN_ID, DEMO_INSTITUTION, DEMO_PARENT_ID, DEMO_STUDENT_ID, DEMO_TEACHER_ID } from './crm-sim/fixtures.js';

export interface DemoLogin {
  label: string;
  role: Role;
  personId: string;
  token: string;
}

/** Tokens for the simulator's demo institution, printed by `npm start`. */
export async function demoLogins(config: Config): Promise<DemoLogin[]> {
  const people: Array<{ label: string; role: Role; id: string; contact: boolean; contactType?: string }> = [
    { label: 'student', role: 'STUDENT', id: DEMO_STUDENT_ID, contact: true, contactType: 'CONTACT_STUDENT' },
    { label: 'teacher', role: 'TEACHER', id: DEMO_TEACHER_ID, contact: false },
    { label: 'admin', role: 'ADMIN', id: DEMO_ADMIN_ID, contact: false },
    { label: 'parent', role: 'PARENT', id: DEMO_PARENT_ID, contact: true, contactType: 'CONTACT_PARENT' },
  ];
  return Promise.all(
    people.map(async (p) => ({
      label: p.label,
      role: p.role,
      personId: p.id,
      token: await mintToken(config.AUTH_SECRET, {
        sub: p.id,
        institutionId: DEMO_INSTITUTION.id,
        role: p.role,
        ...(p.contact ? { contactId: p.id, isContact: true, contactType: p.contactType } : {}),
      }),
    })),
  );
}
