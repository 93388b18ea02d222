import { customType } from 'drizzle-orm/pg-core';

/**
 * A jsonb column for any JSON value, a bare string included. Drizzle's `jsonb` parses a string
 * it reads back as JSON once more (0.45: `mapFromDriverValue`), though node-postgres and PGlite
 * already hand over the parsed value: a stored "42" came back as the number 42, "true" as true.
 * Here the driver's value is taken as it is.
 */
export const jsonValue = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => 'jsonb',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => value,
});
