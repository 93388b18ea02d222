/**
 * Text lengths as the spec counts characters (part 8): Unicode code points, not UTF-16 units,
 * so an emoji is one character and a cut never leaves half of a surrogate pair.
 */

/** The number of code points in `s`. */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A predicate for zod's `refine`: `s` has `min` to `max` characters. */
export const charsBetween = (min: number, max: number) => (s: string) => {
  const n = charCount(s);
  return n >= min && n <= max;
};

/** The first `n` characters of `s` (all of it when shorter). */
export function firstChars(s: string, n: number): string {
  if (s.length <= n) return s;
  let out = '';
  let count = 0;
  for (const ch of s) {
    if (count++ === n) break;
    out += ch;
  }
  return out;
}
