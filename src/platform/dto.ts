/** ISO 8601 for a timestamp column (null stays null): the one date mapper of every DTO. */
export function iso(d: Date): string;
export function iso(d: Date | null | undefined): string | null;
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
