/**
 * The criteria translation, checked without a server: for every operator and a pool of
 * edge values, the MongoDB filter (round-tripped through BSON as the driver sends it)
 * selects via mingo exactly the entries the in-memory reference engine selects.
 */
import { Query, find } from 'mingo';
import type { Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { buildFilter, buildSort, likeToRegexSource, LIKE_OPTIONS } from '../../plugins/mongodb/criteria.js';
import { fromDocument, keyOrder, toDocument } from '../../plugins/mongodb/documents.js';
import { compareEntries, matchesWhere, type Entry, type OrderClause, type WhereClause } from '../../plugins/sources/index.js';
import { casesFor, clause, fixtures, KEY, wire } from './filter-pool.js';

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
