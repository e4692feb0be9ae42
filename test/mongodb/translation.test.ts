/**
 * The criteria translation, checked without a server: for every operator and a pool of
 * edge values, the MongoDB filter (round-tripped through BSON as the driver sends it)
 * selects via mingo exactly the entries the in-memory reference engine selects.
 */
import { Query, find } from 'mingo';
import { BSON, type Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { buildFilter, buildSort, likeToRegexSource, LIKE_OPTIONS } from '../../plugins/mongodb/criteria.js';
import { fromDocument, keyOrder, toDocument } from '../../plugins/mongodb/documents.js';
import { compareEntries, matchesWhere, type Entry, type OrderClause, type WhereClause } from '../../plugins/sources/index.js';

const KEY = 'id';

/** As the driver sends it: BSON with undefined kept as null (TOOLCHAIN.md §4). */
function wire<T extends Document>(value: T): T {
  return BSON.deserialize(BSON.serialize(value, { ignoreUndefined: false })) as T;
}

/** Edge values for one field `v` (the entry without `v` is the "missing" case). */
const VALUES: unknown[] = [
  null, 0, 1, -1, 1.5, 1977, '', '0', '1', 'a', 'A', 'abc', 'ABC', 'Abc', 'a%c', 'a_c', 'a\\c', 'a.c', 'a\nb', 'abc\n', '(x)', 'é', 'É',
  true, false, [], [null], [1, 2], [0], ['a', 'b'], ['A'], [[1]], [0, 'a'], [true], [{ x: 1 }], { x: 1 }, {},
];

/** Values for the nested path `n.x`: objects, arrays of objects (a missing path for the reference), scalars. */
const NESTED: unknown[] = [{ x: 1 }, { x: 'a' }, { x: null }, {}, [{ x: 1 }], [{ x: 'a' }, { x: 2 }], { x: [1, 2] }, 5, null, 'x', [], { x: { y: 1 } }];

function fixtures(): Entry[] {
  const entries: Entry[] = [{ id: 1 }];
  VALUES.forEach((v, i) => entries.push({ id: i + 2, v }));
  NESTED.forEach((n, i) => entries.push({ id: 100 + i, n }));
  return entries;
}

const SCALARS: unknown[] = [null, 0, 1, -1, 1.5, '', '0', '1', 'a', 'A', 'abc', 'é', true, false];
const LISTS: unknown[][] = [[], [0], [null], ['a', 1], [1, null], [false], ['', 'abc', 2], [true, 'A']];
const RANGES: unknown[][] = [[0, 1], [-1, 1.5], ['a', 'b'], ['A', 'abc'], ['', 'z'], [null, 1], [1, 'z'], [false, true], [true, true], [2, 1]];
const PATTERNS: string[] = ['', '%', 'a%', '%A', '%c', '_', 'a_c', 'a\\_c', 'a\\%c', 'a%c', '1%', 'a.c', '(x)', 'a\\\\c', 'a%b', 'abc', 'É', '%\n%', 'abc\\'];

type Case = { label: string; where: WhereClause[] };

function clause(field: string, operator: WhereClause['operator'], value: unknown, boolean: 'and' | 'or' = 'and'): WhereClause {
  return { boolean, field, operator, value };
}

function casesFor(field: string): Case[] {
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

function selectedByReference(entries: Entry[], where: WhereClause[]): unknown[] {
  return entries.filter((e) => matchesWhere(where, e)).map((e) => e.id);
}

function selectedByMongo(entries: Entry[], where: WhereClause[]): unknown[] {
  const query = new Query(wire(buildFilter(where, KEY)));
  return entries.filter((e) => query.test(wire(toDocument(e, KEY, e.id as number)))).map((e) => e.id);
}

describe('criteria translation against the in-memory engine (mingo, no server)', () => {
  const entries = fixtures();

  it('IN looks one level into arrays, never deeper, on both engines', () => {
    const where = [clause('v', 'IN', [1])];
    const query = new Query(wire(buildFilter(where, KEY)));
    for (const [entry, expected] of [[{ id: 1, v: [[1]] }, false], [{ id: 2, v: [2, 1] }, true]] as const) {
      expect(matchesWhere(where, entry)).toBe(expected);
      expect(query.test(wire(toDocument(entry, KEY, entry.id)))).toBe(expected);
    }
  });

  for (const field of ['v', 'n.x', 'n']) {
    it(`every operator on "${field}" selects the same entries`, () => {
      const mismatches: string[] = [];
      const cases = casesFor(field);
      for (const { label, where } of cases) {
        const expected = selectedByReference(entries, where);
        const got = selectedByMongo(entries, where);
        if (JSON.stringify(expected) !== JSON.stringify(got)) {
          mismatches.push(`${label}: reference ${JSON.stringify(expected)} mongo ${JSON.stringify(got)}`);
        }
      }
      expect(cases.length).toBeGreaterThan(150);
      expect(mismatches).toEqual([]);
    });
  }

  it('combines clauses with SQL precedence (AND before OR), on the key field too', () => {
    const combos: WhereClause[][] = [
      [clause('v', '=', 1), clause('v', '=', 'a', 'or')],
      [clause('v', 'NOT NULL', null), clause('v', '>', 0), clause('v', 'LIKE', 'a%', 'or'), clause('id', '<', 10)],
      [clause('id', '>', 3), clause('id', '<=', 20), clause('v', 'NULL', null, 'or')],
      [clause('id', 'IN', [2, 3, 4]), clause('v', '!=', 0)],
      [clause('id', 'BETWEEN', [5, 9], 'or'), clause('n.x', '=', 1, 'or'), clause('v', 'CONTAINS', 'a')],
      [clause('id', 'NOT IN', [1, 2, 3]), clause('v', 'NOT LIKE', '%a%'), clause('v', 'NOT BETWEEN', [0, 1])],
    ];
    for (const where of combos) {
      expect(selectedByMongo(entries, where), JSON.stringify(where)).toEqual(selectedByReference(entries, where));
    }
  });

  it('produces no $-operator from a request value: objects, nested operators and bad lists are a 400', () => {
    const bad: WhereClause[] = [
      clause('v', '=', { $gt: '' }),
      clause('v', '=', { $where: 'sleep(1000)' }),
      clause('v', '!=', [1]),
      clause('v', '>', { $ne: null }),
      clause('v', 'LIKE', { $regex: '.*' }),
      clause('v', 'IN', [{ $gt: 0 }]),
      clause('v', 'IN', [[1]]),
      clause('v', 'IN', { $in: [1] }),
      clause('v', 'BETWEEN', [1]),
      clause('v', 'BETWEEN', [{ $gt: 1 }, 2]),
      clause('v', 'CONTAINS', { $exists: true }),
      clause('v', '=', Number.NaN),
      clause('v', 'EXEC' as WhereClause['operator'], 1),
      clause('$where', '=', 1),
      clause('v.$gt', '=', 1),
      clause('__proto__', '=', 1),
      clause('a.constructor', '=', 1),
      clause('a..b', '=', 1),
      clause('', '=', 1),
    ];
    for (const c of bad) {
      expect(() => buildFilter([c], KEY), JSON.stringify(c)).toThrow(expect.objectContaining({ status: 400 }));
    }
  });

  it('builds LIKE from escaped literal parts, anchored at both ends, case-insensitive', () => {
    expect(likeToRegexSource('a%b_c')).toBe('^a.*b.c(?![\\s\\S])');
    expect(likeToRegexSource('.*(x)[y]{2}|$^+?')).toBe('^\\.\\*\\(x\\)\\[y\\]\\{2\\}\\|\\$\\^\\+\\?(?![\\s\\S])');
    expect(likeToRegexSource('100\\%\\_\\\\')).toBe('^100%_\\\\(?![\\s\\S])');
    expect(LIKE_OPTIONS).toBe('is');
    const filter = wire(buildFilter([clause('title', 'LIKE', 'a(b')], KEY));
    expect(filter).toEqual({ title: { $regex: '^a\\(b(?![\\s\\S])', $options: 'is' } });
    // A trailing newline is not "the end" (PCRE `$` would say it is).
    const like = new Query(filter);
    expect(like.test({ title: 'A(B' })).toBe(true);
    expect(like.test({ title: 'a(b\n' })).toBe(false);
  });

  it('maps the key field to _id', () => {
    expect(wire(buildFilter([clause('id', '=', 4)], KEY))).toEqual({ _id: { $eq: 4 } });
    expect(wire(buildFilter([clause('slug', '=', 'x')], 'slug'))).toEqual({ _id: { $eq: 'x' } });
  });

  it('sorts like the reference on scalar values (several fields, ties in key order)', () => {
    const rows: Entry[] = [
      { id: 10, a: 2, b: 'x' },
      { id: 2, a: 1, b: 'y' },
      { id: 'k', a: null, b: 'x' },
      { id: 3, b: 'z' },
      { id: 1, a: 'str', b: 'x' },
      { id: '20', a: true, b: 'y' },
      { id: 'a', a: false, b: 'Y' },
      { id: 7, a: 1, b: 'x' },
      { id: -5, a: 1.5, b: '' },
      { id: 0.5, a: -3, b: 'B' },
      { id: 'Z', a: 'Str', b: 'x' },
    ];
    const documents = rows.map((r) => wire(toDocument(r, KEY, r.id as number)));
    const orders: OrderClause[][] = [
      [],
      [{ field: 'a', direction: 'asc' }],
      [{ field: 'a', direction: 'desc' }],
      [{ field: 'b', direction: 'asc' }, { field: 'a', direction: 'desc' }],
      [{ field: 'b', direction: 'desc' }, { field: 'id', direction: 'asc' }],
      [{ field: 'id', direction: 'desc' }],
    ];
    for (const orderBy of orders) {
      const sort = Object.fromEntries(buildSort(orderBy, KEY) as Array<[string, 1 | -1]>);
      const got = find(documents, {}).sort(sort).all().map((d) => fromDocument(d as Document, KEY).id);
      const expected = [...rows].sort(compareEntries(orderBy, KEY)).map((r) => r.id);
      expect(got, JSON.stringify(orderBy)).toEqual(expected);
    }
  });

  it('encodes key order so byte order is numeric keys numerically, then string keys', () => {
    const keys: Array<string | number> = [-1e9, -2.5, -1, 0, 0.25, 1, 2, 9, 10, 11, 100, 1e12, 'a', 'abc', 'b', 'Z', '-', ''];
    const encoded = keys.map((k) => ({ k, o: keyOrder(k) }));
    const byBytes = [...encoded].sort((x, y) => Buffer.compare(Buffer.from(x.o), Buffer.from(y.o))).map((x) => x.k);
    const byReference = [...keys].sort((x, y) => compareEntries([], 'id')({ id: x }, { id: y }));
    expect(byBytes).toEqual(byReference);
    expect(keyOrder('10')).toBe(keyOrder(10));
  });
});
