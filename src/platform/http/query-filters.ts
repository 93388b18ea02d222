import { z } from 'zod';

/** An empty query value (`?status=`, as a form sends the "All" choice or a field left blank) counts as absent. */
export const blankIsAbsent = (v: unknown) => (v === '' ? undefined : v);

/** An optional filter of a list's query: absent or empty means no filter; anything else must pass `schema`. */
export const optionalFilter = <T extends z.ZodType>(schema: T) => z.preprocess(blankIsAbsent, schema.optional());
