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
});
