/** ISO 8601 for a timestamp column (null stays null). */
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
