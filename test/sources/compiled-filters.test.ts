import { describe, expect, it } from 'vitest';
import { compileReferenceWhere, compileWhere } from '../../plugins/sources/criteria/match.js';
import type { Entry, WhereClause } from '../../plugins/sources/index.js';

/**
 * Issue #16: the common filter shapes are compiled into one function per shape
 * (criteria/match.ts). It must agree with the closure-per-clause form on every entry,
 * including the awkward ones: other types, null, missing, arrays, objects, prototype names.
 */
const VALUES: unknown[] = [0, 1, -1, 2.5, '1', '', 'a', 'B', 'ab', true, false, null, [1, 'a'], ['1'], [], [null], { a: 1 }, [[1]]];
const OPS = ['=', '!=', '<', '<=', '>', '>='] as const;
const FIELDS = ['x', 'y', 'toString', 'constructor', 'missing'];

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('compiled filters agree with the reference closures', () => {
  it('on every entry for seeded random scalar filters (AND/OR, every comparison, every value type)', () => {
    const r = rng(7);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
    const entries: Entry[] = [];
    for (const x of VALUES) for (const y of [undefined, ...VALUES.slice(0, 8)]) entries.push(y === undefined ? { id: entries.length, x } : { id: entries.length, x, y });
    entries.push({ id: -1 });
    let compiled = 0;
    for (let q = 0; q < 600; q++) {
      const where: WhereClause[] = [];
      const n = 1 + Math.floor(r() * 3);
      for (let i = 0; i < n; i++) {
        const scalar = pick(VALUES.filter((v) => v !== null && typeof v !== 'object'));
        where.push({ boolean: i > 0 && r() < 0.3 ? 'or' : 'and', field: pick(FIELDS), operator: pick(OPS), value: scalar });
      }
      const fast = compileWhere(where);
      const reference = compileReferenceWhere(where);
      if (fast.toString() !== reference.toString()) compiled++;
      for (const entry of entries) expect(fast(entry), `${JSON.stringify(where)} on ${JSON.stringify(entry)}`).toBe(reference(entry));
    }
    // The comparison is only worth something if the compiled form was taken.
    expect(compiled).toBe(600);
  });

  it('leaves other shapes to the reference closures (dotted paths, lists, null, LIKE)', () => {
    const other: WhereClause[][] = [
      [{ boolean: 'and', field: 'a.b', operator: '=', value: 1 }],
      [{ boolean: 'and', field: 'x', operator: 'IN', value: [1, 2] }],
      [{ boolean: 'and', field: 'x', operator: '=', value: null }],
      [{ boolean: 'and', field: 'x', operator: 'LIKE', value: 'a%' }],
    ];
    for (const where of other) expect(compileWhere(where).toString()).toBe(compileReferenceWhere(where).toString());
  });
});
