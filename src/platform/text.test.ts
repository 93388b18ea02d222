import { describe, expect, it } from 'vitest';
import { charCount, charsBetween, firstChars } from './text.js';

describe('characters as the spec counts them (code points)', () => {
  it('counts an emoji or a letter outside the BMP as one character', () => {
    expect(charCount('')).toBe(0);
    expect(charCount('abc')).toBe(3);
    expect(charCount('🎬é𝒳')).toBe(3);
    expect('🎬é𝒳'.length).toBe(5);
  });

  it('bounds a length inclusively', () => {
    const between = charsBetween(3, 5);
    expect(['ab', '🎬🎬'].map(between)).toEqual([false, false]);
    expect(['abc', '🎬🎬🎬', '🎬🎬🎬🎬🎬'].map(between)).toEqual([true, true, true]);
    expect(between('🎬🎬🎬🎬🎬🎬')).toBe(false);
  });

  it('cuts after whole characters, never inside a surrogate pair', () => {
    expect(firstChars('a🎬b', 2)).toBe('a🎬');
    expect(firstChars('🎬🎬🎬', 1)).toBe('🎬');
    expect(firstChars('short', 10)).toBe('short');
    expect(firstChars('abc', 0)).toBe('');
    expect(firstChars('🎬'.repeat(600), 500)).toBe('🎬'.repeat(500));
  });
});
