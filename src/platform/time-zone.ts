/** True when `Intl` knows the zone (IANA names such as `Europe/Berlin`, and `UTC`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The zone's canonical IANA spelling as `Intl` resolves it (`europe/berlin` → `Europe/Berlin`,
 * `utc` → `UTC`), so what is stored and answered is one name per zone (institution settings,
 * digest times, report schedules). A zone `Intl` does not know is returned as given.
 */
export function canonicalTimeZone(zone: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return zone;
  }
}
