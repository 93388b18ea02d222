import { describe, expect, it } from 'vitest';
import { childSchema, classSchema, contactSchema, feeStatusSchema, parentLinkSchema, studentSchema } from './types.js';

describe('CRM records (spec 2.11): absent optional fields read as null', () => {
  it('a child with only its ids has every other field null and is not primary', () => {
    expect(childSchema.parse({ studentId: 's1', contactId: 'c1' })).toEqual({
      studentId: 's1',
      contactId: 'c1',
      name: null,
      email: null,
      studentCode: null,
      class: null,
      section: null,
      photoUrl: null,
      status: null,
      relation: null,
      isPrimary: false,
    });
    expect(childSchema.parse({ studentId: 's1', contactId: 'c1', name: 'Ada', isPrimary: true, photoUrl: null })).toMatchObject({ name: 'Ada', isPrimary: true, photoUrl: null });
    // A child without a portal Contact row yet (spec 4.6 rule 6).
    expect(childSchema.parse({ studentId: 's1' }).contactId).toBeNull();
    expect(childSchema.parse({ studentId: 's1', contactId: null }).contactId).toBeNull();
  });

  it('the same for contacts, students, parent links, classes and fee status', () => {
    expect(contactSchema.parse({ id: 'c1', firstName: 'Ada' })).toEqual({ id: 'c1', firstName: 'Ada', lastName: null, email: null, contactType: null, status: null });
    expect(studentSchema.parse({ id: 's1', contactId: 'c1' })).toMatchObject({ currentEnrolment: null, studentCode: null });
    expect(studentSchema.parse({ id: 's1', contactId: 'c1', currentEnrolment: { classId: 'k1' } }).currentEnrolment).toEqual({
      classId: 'k1',
      className: null,
      sectionId: null,
      sectionName: null,
    });
    expect(parentLinkSchema.parse({ parentContactId: 'p1' })).toMatchObject({ email: null, isPrimary: false });
    expect(classSchema.parse({ id: 'k1', name: '7A' })).toEqual({ id: 'k1', name: '7A', year: null, sections: [] });
    expect(feeStatusSchema.parse({ status: 'PAID', outstanding: 0 })).toEqual({ status: 'PAID', outstanding: 0, dueDate: null });
  });

  it('still refuses a record without its ids or with a field of the wrong type', () => {
    expect(childSchema.safeParse({ contactId: 'c1' }).success).toBe(false);
    expect(childSchema.safeParse({ studentId: 's1', contactId: 7 }).success).toBe(false);
    expect(childSchema.safeParse({ studentId: 's1', contactId: 'c1', name: 42 }).success).toBe(false);
    expect(contactSchema.safeParse({ firstName: 'Ada' }).success).toBe(false);
    expect(feeStatusSchema.safeParse({ status: 'LATE', outstanding: 0 }).success).toBe(false);
  });
});
