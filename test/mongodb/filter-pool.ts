/**
 * The filter pool shared by the translation checks: edge values for one field, nested
 * paths, and every operator over scalars, lists, ranges and LIKE patterns. Run against
 * mingo (translation.test.ts) and, with MONGODB_URL, a real server (real-server.test.ts).
 */
import { BSON, type Document } from 'mongodb';
import type { Entry, WhereClause } from '../../plugins/sources/index.js';

export const KEY = 'id';

/** As the driver sends it: BSON-serialized and back, undefined kept as null. */
export function wire<T extends Document>(value: T): T {
  return BSON.deserialize(BSON.serialize(value, { ignoreUndefined: false })) as T;
}

/** Edge values for one field `v` (the entry without `v` is the "missing" case). */
const VALUES: unknown[] = [
  null, 0, 1, -1, 1.5, 1977, '', '0', '1', 'a', 'A', 'abc', 'ABC', 'Abc', 'a%c', 'a_c', 'a\\c', 'a.c', 'a\nb', 'abc\n', '(x)', 'é', 'É',
  true, false, [], [null], [1, 2], [0], ['a', 'b'], ['A'], [[1]], [0, 'a'], [true], [{ x: 1 }], { x: 1 }, {},
];

/** Values for the nested path `n.x`: objects, arrays of objects (a missing path for the reference), scalars. */
const NESTED: unknown[] = [{ x: 1 }, { x: 'a' }, { x: null }, {}, [{ x: 1 }], [{ x: 'a' }, { x: 2 }], { x: [1, 2] }, 5, null, 'x', [], { x: { y: 1 } }];

export function fixtures(): Entry[] {
  const entries: Entry[] = [{ id: 1 }];
  VALUES.forEach((v, i) => entries.push({ id: i + 2, v }));
  NESTED.forEach((n, i) => entries.push({ id: 100 + i, n }));
  return entries;
}

const SCALARS: unknown[] = [null, 0, 1, -1, 1.5, '', '0', '1', 'a', 'A', 'abc', 'é', true, false];
const LISTS: unknown[][] = [[], [0], [null], ['a', 1], [1, null], [false], ['', 'abc', 2], [true, 'A']];
const RANGES: unknown[][] = [[0, 1], [-1, 1.5], ['a', 'b'], ['A', 'abc'], ['', 'z'], [null, 1], [1, 'z'], [false, true], [true, true], [2, 1]];
const PATTERNS: string[] = ['', '%', 'a%', '%A', '%c', '_', 'a_c', 'a\\_c', 'a\\%c', 'a%c', '1%', 'a.c', '(x)', 'a\\\\c', 'a%b', 'abc', 'É', '%\n%', 'abc\\'];

export type Case = { label: string; where: WhereClause[] };

export function clause(field: string, operator: WhereClause['operator'], value: unknown, boolean: 'and' | 'or' = 'and'): WhereClause {
  return { boolean, field, operator, value };
}

export function casesFor(field: string): Case[] {
  const cases: Case[] = [];
  const add = (operator: WhereClause['operator'], value: unknown): void => {
    cases.push({ label: `${field} ${operator} ${JSON.stringify(value)}`, where: [clause(field, operator, value)] });
  };
  for (const op of ['=', '!=', '<', '<=', '>', '>=', 'CONTAINS'] as const) for (const v of SCALARS) add(op, v);
  for (const op of ['LIKE', 'NOT LIKE'] as const) for (const p of PATTERNS) add(op, p);
  for (const op of ['LIKE', 'NOT LIKE'] as const) for (const v of [1, true, null]) add(op, v);
  for (const op of ['IN', 'NOT IN'] as const) for (const list of LISTS) add(op, list);
  for (const op of ['BETWEEN', 'NOT BETWEEN'] as const) for (const range of RANGES) add(op, range);
  add('NULL', null);
  add('NOT NULL', null);
  return cases;
}

