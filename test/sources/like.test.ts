import { describe, expect, it } from 'vitest';
import { compileLike, likeToRegExp } from '../../plugins/sources/index.js';

const values = ['', 'a', 'A', 'abc', 'ABC', 'a.c', 'a%c', 'a_c', 'a\\c', 'line1\nline2', 'ßtraße', 'İstanbul', 'ǅ', 'Ünïcödé', '😀x', 'the end', 'aaaab', 'abab'];
const patterns = ['', '%', '_', 'a', 'a%', '%c', '%b%', 'a_c', 'a\\%c', 'a\\_c', 'a\\\\c', '%line2', 'line1_line2', 'STRASSE', 'ßtra%', '%İ%', 'ǆ', 'ünï%', '_x', '__x', '%a%a%b', 'a%%b', '%%', 'ab\\', '%.%', '(%)'];

describe('compileLike', () => {
  it('means exactly what the anchored case-insensitive regex means', () => {
    const mismatches: string[] = [];
    for (const pattern of patterns) {
      const like = compileLike(pattern);
      const regex = likeToRegExp(pattern);
      for (const value of values) {
        if (like(value) !== regex.test(value)) mismatches.push(`${JSON.stringify(pattern)} on ${JSON.stringify(value)}: ${like(value)} vs ${regex.test(value)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('answers a pathological pattern on a long value without backtracking blow-up', () => {
    // As a regex (a.*a.*a.*b) this takes seconds on a few thousand characters and blocks the server.
    const value = 'a'.repeat(20_000);
    expect(compileLike('%a%a%a%b')(value)).toBe(false);
    expect(compileLike('%a%a%a%a')(value)).toBe(true);
    expect(compileLike('%a%a%_%b')(`${value}b`)).toBe(true);
  });

  it('agrees with the regex on random patterns and values (wildcards, escapes, case)', () => {
    let seed = 7;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const alphabet = ['a', 'b', 'A', '%', '_', '\\', 'ß', '.'];
    const mismatches: string[] = [];
    for (let t = 0; t < 3000; t++) {
      const pattern = Array.from({ length: random(8) }, () => alphabet[random(alphabet.length)]).join('');
      const value = Array.from({ length: random(12) }, () => 'abAB_%.'[random(7)]).join('');
      if (compileLike(pattern)(value) !== likeToRegExp(pattern).test(value)) mismatches.push(`${JSON.stringify(pattern)} on ${JSON.stringify(value)}`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });

  it('stays linear on hostile `_` segments and long values (issue #13)', () => {
    const value = 'a'.repeat(1_000_000);
    expect(compileLike(`%${'a_'.repeat(500)}b%`)(value)).toBe(false);
    expect(compileLike(`%${'a'.repeat(1000)}b%`)(value)).toBe(false);
    expect(compileLike(`${'_'.repeat(1000)}%${'_'.repeat(1000)}`)(value)).toBe(true);
    // (The timing itself is asserted where it matters, on a live server: test/security/freeze.test.ts.)
  });
});
