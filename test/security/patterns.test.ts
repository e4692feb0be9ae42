import { describe, expect, it } from 'vitest';
import { pathPattern } from '../../plugins/api/gate.js';

/** Issue #13 item 2: gate_except patterns keep Laravel's Str::is meaning, matched without backtracking. */
describe('gate_except patterns', () => {
  const reference = (pattern: string): RegExp =>
    new RegExp(`^${pattern.replace(/^\/+/, '').split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');

  it('match exactly what the anchored glob regex matches', () => {
    let seed = 11;
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const mismatches: string[] = [];
    for (let t = 0; t < 3000; t++) {
      const pattern = Array.from({ length: random(7) }, () => 'ab*/.'[random(5)]).join('');
      const path = Array.from({ length: random(9) }, () => 'ab/.'[random(4)]).join('');
      if (pathPattern(pattern).test(path) !== reference(pattern).test(path)) mismatches.push(`${pattern} on ${path}`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(pathPattern('/api/streams/*').test('api/streams/planets/entries')).toBe(true);
    expect(pathPattern('api/streams/people').test('api/streams/people/entries')).toBe(false);
  });

  it('answer a long hostile path without backtracking', () => {
    const path = 'a'.repeat(20_000);
    expect(pathPattern('*a*a*a*a*a*b').test(path)).toBe(false);
    expect(pathPattern('*a*a*a*a*a*a').test(path)).toBe(true);
  });
});
