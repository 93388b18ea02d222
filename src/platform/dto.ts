/**
 * ISO 8601 for a timestamp (null stays null): the one date mapper of every DTO. A timestamp
 * read through SQL text (`rawRows`) may arrive as a string, depending on the driver: it is
 * parsed first.
 */
export function iso(d: Date | string): string;
export function iso(d: Date | string | null | undefined): string | null;
export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}
