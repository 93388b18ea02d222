import { expect } from 'vitest';

/** The response is the error envelope of spec 2.1 with this status and code. */
export function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.data).toBeNull();
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
}

/** The response succeeded with this status, in the envelope. */
export function expectOk(res: { status: number; body: any }, status = 200) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error).toBeNull();
  return res.body.data;
}

/** The names of the fields a VALIDATION_ERROR lists in `error.details.fields`. */
export function failingFields(res: { body: any }): string[] {
  return (res.body.error?.details?.fields ?? []).map((f: { field: string }) => f.field);
}
