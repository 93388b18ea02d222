import type { MintInput } from '../src/platform/auth/tokens.js';
import { DEMO_INSTITUTION, DEMO_STUDENT_ID } from '../src/dev/crm-sim/fixtures.js';

/** Session claims of a student Contact (as the CRM sign-in gives them): the callers of the benches. Default: the demo student. */
export const studentClaims = (studentId: string = DEMO_STUDENT_ID, institutionId: string = DEMO_INSTITUTION.id): MintInput => ({
  sub: studentId,
  institutionId,
  role: 'STUDENT',
  contactId: studentId,
  isContact: true,
  contactType: 'CONTACT_STUDENT',
});
