import { z } from 'zod';

/**
 * Whether `v` can be stored in a PostgreSQL `real` (float4) column: it neither overflows nor, being
 * non-zero, underflows to 0 (PostgreSQL refuses both; 5e-324 is a valid JSON number).
 */
export const fitsReal = (v: number) => {
  const f = Math.fround(v);
  return Number.isFinite(f) && (f !== 0 || v === 0);
};

/** A finite number bound for a `real` column. */
export const realNumber = () => z.number().finite().refine(fitsReal, 'is too close to 0 to be stored (send 0)');
