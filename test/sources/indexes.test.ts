import path from 'node:path';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollectionSource } from '../../plugins/sources/collection/collection-store.js';
import { compileReferenceWhere } from '../../plugins/sources/criteria/match.js';
import { compareEntries } from '../../plugins/sources/criteria/order.js';
import type { Entry, OrderClause, SourceQuery, WhereClause } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { field, makeDefinition } from './definitions.js';
import { silentLogger } from './harness.js';

/**
 * Issue #16 item 2: indexes and the planner never change an answer. The same entries are
 * served by an engine with every index (hash and sorted on every field) and by one with
 * none (scans); seeded random filters, sorts and pages must give the same ids, order and
 * totals, before and after random writes. Then over HTTP: declared indexes follow writes
 * and hand edits of the files, and `config.indexes` is checked.
 */

/** Deterministic PRNG (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TAGS = ['red', 'blue', 'green', 'Red', ''];
/** Values of every kind a stored field can hold, mixed on purpose (types, null, missing, arrays, objects). */
function randomValue(r: () => number): unknown {
  const pick = Math.floor(r() * 14);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return undefined; // missing
    case 2:
    case 3:
      return Math.floor(r() * 10);
    case 4:
      return Math.floor(r() * 10) / 2;
    case 5:
    case 6:
      return TAGS[Math.floor(r() * TAGS.length)];
    case 7:
      return String(Math.floor(r() * 10));
    case 8:
      return r() < 0.5;
    case 9:
      return [TAGS[Math.floor(r() * TAGS.length)], Math.floor(r() * 10)];
    case 10:
      return [null, 'red'];
    case 11:
      return { x: Math.floor(r() * 3) };
    case 12:
      return [];
    default:
      return -Math.floor(r() * 5);
  }
}

const FIELDS = ['a', 'b', 'c'];
function randomEntry(r: () => number, id: number): Entry {
  const entry: Entry = { id };
  for (const f of FIELDS) {
    const v = randomValue(r);
    if (v !== undefined) entry[f] = v;
  }
  if (r() < 0.5) entry.n = { deep: randomValue(r) };
  return entry;
}

const OPERATORS = ['=', '!=', '<', '<=', '>', '>=', 'IN', 'NOT IN', 'BETWEEN', 'NULL', 'NOT NULL', 'CONTAINS', 'LIKE'] as const;
function randomClause(r: () => number, first: boolean): WhereClause {
  const fieldName = [...FIELDS, 'id', 'n.deep', 'missing'][Math.floor(r() * 6)]!;
  const operator = OPERATORS[Math.floor(r() * OPERATORS.length)]!;
  let value: unknown = randomValue(r);
  if (operator === 'IN' || operator === 'NOT IN') value = [randomValue(r), randomValue(r)].map((v) => (v === undefined ? null : v));
  if (operator === 'BETWEEN') value = r() < 0.7 ? [Math.floor(r() * 5), Math.floor(r() * 10)] : ['blue', 'red'];
  if (operator === 'LIKE') value = r() < 0.5 ? 're%' : '%e%';
  if (value === undefined) value = null;
  return { boolean: first || r() < 0.75 ? 'and' : 'or', field: fieldName, operator, value };
}

function randomQuery(r: () => number): SourceQuery {
  const where: WhereClause[] = [];
  const count = Math.floor(r() * 4);
  for (let i = 0; i < count; i++) where.push(randomClause(r, i === 0));
  const orderBy: OrderClause[] = [];
  const orders = Math.floor(r() * 3);
  for (let i = 0; i < orders; i++) orderBy.push({ field: [...FIELDS, 'id', 'n.deep'][Math.floor(r() * 5)]!, direction: r() < 0.5 ? 'asc' : 'desc' });
  const skip = r() < 0.3 ? Math.floor(r() * 50) : 0;
  const limit = r() < 0.2 ? undefined : 1 + Math.floor(r() * 30);
  return { where, orderBy, skip, limit };
}

function streamDefinition(indexes: unknown[] | undefined, data: Entry[]): StreamDefinition {
  const definition = makeDefinition('things', {
    fields: [field('id', 'integer'), field('a', 'string'), field('b', 'string'), field('c', 'string'), field('n', 'object')],
    source: { type: 'collection' },
    data,
  });
  if (indexes) definition.config.indexes = indexes;
  return definition;
}

const EVERY_INDEX = [...FIELDS, 'n.deep', 'id'].flatMap((f) => [f, { field: f, type: 'sorted' }]);

describe('indexed engine against the scanning engine (differential)', () => {
  it('gives the same ids, order and totals for seeded random queries, before and after random writes', async () => {
    const r = rng(16);
    // Enough entries that the planner prefers indexes (it scans when candidates are most of the stream).
    const data = Array.from({ length: 600 }, (_, i) => randomEntry(r, i + 1));
    const indexed = createCollectionSource({ definition: streamDefinition(EVERY_INDEX, data), logger: silentLogger });
    const scanning = createCollectionSource({ definition: streamDefinition(undefined, data), logger: silentLogger });
    await indexed.open();
    await scanning.open();
    let planned = 0;
    // The plain reference: every entry through the closure predicate, one full sort with the
    // comparator of criteria/order.ts (no index, no top-k, no typed keys), then the slice.
    const current = new Map<number, Entry>(data.map((e) => [e.id as number, e]));
    const reference = (query: SourceQuery): { ids: unknown[]; total: number } => {
      const matches = [...current.values()].filter(compileReferenceWhere(query.where)).sort(compareEntries(query.orderBy, 'id'));
      const skip = query.skip ?? 0;
      return { ids: matches.slice(skip, query.limit === undefined ? undefined : skip + query.limit).map((e) => e.id), total: matches.length };
    };
    const compare = async (round: number): Promise<void> => {
      for (let q = 0; q < 400; q++) {
        const query = randomQuery(r);
        const [x, y] = await Promise.all([indexed.paginate(query), scanning.paginate(query)]);
        const label = `round ${round} query ${q}: ${JSON.stringify(query)}`;
        const expected = reference(query);
        expect(y.entries.map((e) => e.id), `${label} (scan vs reference)`).toEqual(expected.ids);
        expect(y.total, label).toBe(expected.total);
        expect(x.entries.map((e) => e.id), label).toEqual(y.entries.map((e) => e.id));
        expect(x.total, label).toBe(y.total);
        expect(await indexed.count(query.where), label).toBe(y.total);
        if (indexed.explain(query.where).length > 0) planned++;
        // Asked again: the cached (fully sorted) path must agree too.
        const again = await indexed.paginate(query);
        expect(again.entries.map((e) => e.id), `${label} (again)`).toEqual(y.entries.map((e) => e.id));
        // The next pages come from what the first ask kept (a top-k prefix) or extend it.
        if (query.limit !== undefined) {
          for (const skip of [(query.skip ?? 0) + query.limit, 990, 2000]) {
            const next = { ...query, skip };
            const page = await indexed.paginate(next);
            expect(page.entries.map((e) => e.id), `${label} (skip ${skip})`).toEqual(reference(next).ids);
            expect(page.total, `${label} (skip ${skip})`).toBe(expected.total);
          }
        }
      }
    };
    await compare(0);
    for (let round = 1; round <= 3; round++) {
      for (let w = 0; w < 150; w++) {
        const id = 1 + Math.floor(r() * 700);
        if (r() < 0.25) {
          await indexed.delete(id);
          await scanning.delete(id);
          current.delete(id);
        } else {
          const entry = randomEntry(r, id);
          await indexed.put(id, entry);
          await scanning.put(id, entry);
          current.set(id, entry);
        }
      }
      await compare(round);
    }
    // The comparison means something only if indexes answered a good share of the queries.
    expect(planned).toBeGreaterThan(300);
  });

  it('picks the most selective index, intersects with a hash lookup, unions OR groups and falls back to a scan', async () => {
    const data = Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, a: `g${i % 10}`, b: `h${i % 100}`, c: String(i % 2) }));
    const source = createCollectionSource({ definition: streamDefinition(['a', 'b', { field: 'id', type: 'sorted' }], data), logger: silentLogger });
    await source.open();
    const eq = (f: string, value: unknown, boolean: 'and' | 'or' = 'and'): WhereClause => ({ boolean, field: f, operator: '=', value });
    expect(source.explain([eq('a', 'g1'), eq('b', 'h11')])).toEqual(['index:b']);
    expect(source.explain([eq('b', 'h11'), eq('a', 'g1')])).toEqual(['index:b']);
    expect(source.explain([eq('a', 'g1'), { boolean: 'and', field: 'id', operator: '<', value: 2000 }])).toEqual(['index:a']);
    expect(source.explain([eq('a', 'g1'), { boolean: 'and', field: 'id', operator: '<', value: 30 }])).toEqual(['index:id']);
    expect(source.explain([eq('a', 'g1'), { boolean: 'and', field: 'id', operator: '>', value: 100 }])).toEqual(['index:a']);
    expect(source.explain([eq('a', 'g1'), eq('b', 'h1', 'or')])).toEqual(['index:a', 'index:b']);
    // An OR group without an index, and a filter matching most of the stream: scans.
    expect(source.explain([eq('a', 'g1'), eq('c', '1', 'or')])).toEqual([]);
    expect(source.explain([{ boolean: 'and', field: 'id', operator: '>', value: 0 }])).toEqual([]);
    // The key is always indexed.
    expect(source.explain([eq('id', 5)])).toEqual(['index:id']);
    const both = await source.paginate({ where: [eq('a', 'g1'), eq('b', 'h11')], orderBy: [], limit: 100 });
    expect(both.entries.map((e) => e.id)).toEqual([12, 112, 212, 312, 412, 512, 612, 712, 812, 912]);
  });

  it('keeps whole sorted orders within streams.caches.orders_bytes (8 bytes an entry), answering the same pages', async () => {
    const data = Array.from({ length: 5000 }, (_, i) => ({ id: i + 1, a: `g${(i * 7) % 13}`, b: `h${(i * 11) % 17}`, c: String((i * 3) % 5) }));
    // About 40 KB an order: two fit in 100 KB, never the 8 asked for.
    const source = createCollectionSource({ definition: streamDefinition([], data), logger: silentLogger }).limitCaches({ matchBytes: 1024 * 1024, ordersBytes: 100_000 });
    await source.open();
    const orders: OrderClause[][] = [];
    for (const first of ['a', 'b', 'c', 'id']) for (const direction of ['asc', 'desc'] as const) orders.push([{ field: first, direction }, { field: 'id', direction: 'asc' }]);
    const held = (source as unknown as { table: { sorted: { bytes: number; size: number } } }).table.sorted;
    for (let round = 0; round < 2; round++) {
      for (const orderBy of orders) {
        // Deep pages: answered by one full sort, which is what the order cache keeps.
        const page = await source.paginate({ where: [], orderBy, skip: 4000, limit: 10 });
        expect(page.entries.map((e) => e.id)).toEqual([...data].sort(compareEntries(orderBy, 'id')).slice(4000, 4010).map((e) => e.id));
        expect(held.bytes).toBeLessThanOrEqual(100_000);
      }
    }
    expect(held.size).toBeGreaterThan(0);
    expect(held.size).toBeLessThanOrEqual(2);
  });

  it('intersects two hash lookups when the best one is not tiny', async () => {
    const data = Array.from({ length: 2000 }, (_, i) => ({ id: i + 1, a: `g${i % 4}`, b: `h${i % 3}` }));
    const source = createCollectionSource({ definition: streamDefinition(['a', 'b'], data), logger: silentLogger });
    await source.open();
    const where: WhereClause[] = [
      { boolean: 'and', field: 'a', operator: '=', value: 'g1' },
      { boolean: 'and', field: 'b', operator: '=', value: 'h2' },
    ];
    expect(source.explain(where)).toEqual(['index:a+b']);
    const page = await source.paginate({ where, orderBy: [{ field: 'id', direction: 'desc' }], limit: 3 });
    expect(page.total).toBe(data.filter((e) => e.a === 'g1' && e.b === 'h2').length);
    expect(page.entries.map((e) => e.id)).toEqual(data.filter((e) => e.a === 'g1' && e.b === 'h2').map((e) => e.id).reverse().slice(0, 3));
  });

  it('builds a hash index by itself for a declared field filtered by equality again and again', async () => {
    const data = Array.from({ length: 3000 }, (_, i) => ({ id: i + 1, a: `g${i % 30}` }));
    const source = createCollectionSource({ definition: streamDefinition(undefined, data), logger: silentLogger });
    await source.open();
    const where: WhereClause[] = [{ boolean: 'and', field: 'a', operator: '=', value: 'g7' }];
    expect(source.explain(where)).toEqual([]);
    for (let i = 0; i < 3; i++) await source.paginate({ where: [{ ...where[0]!, value: `g${i}` }], orderBy: [], limit: 5 });
    expect(source.explain(where)).toEqual(['index:a']);
    const page = await source.paginate({ where, orderBy: [{ field: 'id', direction: 'desc' }], limit: 2 });
    expect(page.entries.map((e) => e.id)).toEqual([2978, 2948]);
    // Kept in step with writes like a declared one.
    await source.put(2978, { id: 2978, a: 'moved' });
    expect((await source.paginate({ where, orderBy: [{ field: 'id', direction: 'desc' }], limit: 2 })).entries.map((e) => e.id)).toEqual([2948, 2918]);
  });

  it('gives deep pages of large lists (top-k with a big heap, prefixes, full sorts) as the reference does', async () => {
    const r = rng(1600);
    const data = Array.from({ length: 12_000 }, (_, i) => ({ id: i + 1, a: Math.floor(r() * 50), b: r() < 0.1 ? null : `s${Math.floor(r() * 300)}`, c: r() < 0.5 }));
    const source = createCollectionSource({ definition: streamDefinition(undefined, data), logger: silentLogger });
    const orders: OrderClause[][] = [[{ field: 'a', direction: 'desc' }], [{ field: 'b', direction: 'asc' }, { field: 'a', direction: 'desc' }], [{ field: 'c', direction: 'asc' }]];
    for (const orderBy of orders) {
      for (const where of [[], [{ boolean: 'and', field: 'c', operator: '=', value: true } as WhereClause]]) {
        const all = data.filter(compileReferenceWhere(where)).sort(compareEntries(orderBy, 'id'));
        for (const [skip, limit] of [[0, 20], [20, 20], [1000, 50], [1400, 100], [980, 40], [5000, 10], [0, 20]]) {
          const page = await source.paginate({ where, orderBy, skip, limit });
          const label = `${JSON.stringify(orderBy)} ${JSON.stringify(where)} ${skip}+${limit}`;
          expect(page.entries.map((e) => e.id), label).toEqual(all.slice(skip, skip + limit).map((e) => e.id));
          expect(page.total, label).toBe(all.length);
        }
      }
    }
  });

  it('pages a sorted index in both directions with ties in key order, as a full sort does', async () => {
    const data = Array.from({ length: 300 }, (_, i) => ({ id: 300 - i, a: i % 7 === 0 ? null : `v${i % 5}` }));
    const indexed = createCollectionSource({ definition: streamDefinition([{ field: 'a', type: 'sorted' }], data), logger: silentLogger });
    const scanning = createCollectionSource({ definition: streamDefinition(undefined, data), logger: silentLogger });
    for (const direction of ['asc', 'desc'] as const) {
      for (const skip of [0, 5, 37, 120, 299, 400]) {
        const query = { where: [], orderBy: [{ field: 'a', direction }], skip, limit: 25 };
        expect((await indexed.paginate(query)).entries.map((e) => e.id), `${direction} ${skip}`).toEqual((await scanning.paginate(query)).entries.map((e) => e.id));
      }
    }
  });
});

describe('declared indexes over HTTP', () => {
  let app: TestApp;
  const E = '/api/streams/things/entries';
  const ids = (res: { json: { data: Array<{ id: number }> } }): number[] => res.json.data.map((e) => e.id);
  beforeAll(async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({ id: i + 1, kind: ['a', 'b', 'c', 'd'][i % 4], size: (i * 7) % 13 }));
    app = await startApp({
      streams: {
        things: {
          fields: { id: 'integer', kind: 'string', size: 'integer', code: { type: 'string', unique: true } },
          config: { source: { type: 'filebase', format: 'json' }, indexes: ['kind', { field: 'size', type: 'sorted' }] },
        },
      },
      files: Object.fromEntries(rows.map((r) => [`streams/data/things/${r.id}.json`, JSON.stringify(r)])),
    });
  });
  afterAll(() => app.close());

  it('answers from the indexes and follows API writes', async () => {
    const before = await app.request('GET', `${E}?where[kind]=b&where[size]=6&constraint[size]=%3E%3D&orderBy[size]=desc&per_page=100`);
    expect(before.status).toBe(200);
    const expected = Array.from({ length: 40 }, (_, i) => ({ id: i + 1, kind: ['a', 'b', 'c', 'd'][i % 4], size: (i * 7) % 13 }))
      .filter((e) => e.kind === 'b' && e.size >= 6)
      .sort((x, y) => y.size - x.size || x.id - y.id)
      .map((e) => e.id);
    expect(ids(before)).toEqual(expected);
    const moved = expected[0]!;
    expect((await app.request('PATCH', `${E}/${moved}`, { kind: 'z' })).status).toBe(200);
    expect(ids(await app.request('GET', `${E}?where[kind]=b&where[size]=6&constraint[size]=%3E%3D&orderBy[size]=desc&per_page=100`))).toEqual(expected.slice(1));
    expect(ids(await app.request('GET', `${E}?where[kind]=z`))).toEqual([moved]);
    expect((await app.request('DELETE', `${E}/${moved}`)).status).toBe(204);
    expect(ids(await app.request('GET', `${E}?where[kind]=z`))).toEqual([]);
  });

  it('follows hand edits of the files (live sync goes through the same index updates)', async () => {
    const folder = path.join(app.root, 'streams/data/things');
    const temp = path.join(folder, '.7.json.swp');
    writeFileSync(temp, JSON.stringify({ id: 7, kind: 'edited', size: 99 }));
    renameSync(temp, path.join(folder, '7.json'));
    await eventually(async () => expect(ids(await app.request('GET', `${E}?where[kind]=edited`))).toEqual([7]));
    expect(ids(await app.request('GET', `${E}?where[size]=50&constraint[size]=%3E`))).toEqual([7]);
    expect(ids(await app.request('GET', `${E}?orderBy[size]=desc&per_page=1`))).toEqual([7]);
    rmSync(path.join(folder, '7.json'));
    await eventually(async () => expect(ids(await app.request('GET', `${E}?where[kind]=edited`))).toEqual([]));
    expect(ids(await app.request('GET', `${E}?where[size]=50&constraint[size]=%3E`))).toEqual([]);
  });

  it('refuses indexes on undeclared fields or of unknown types (409 over the API, nothing written)', async () => {
    for (const indexes of [['nope'], [{ field: 'kind', type: 'btree' }], [{ field: 'kind.__proto__' }], 'kind']) {
      const res = await app.request('POST', '/api/streams', { id: 'bad_index', name: 'Bad', fields: { id: 'integer', kind: 'string' }, config: { source: { type: 'collection' }, indexes } });
      expect([400, 409, 422], JSON.stringify(indexes)).toContain(res.status);
      expect((await app.request('GET', '/api/streams/bad_index')).status).toBe(404);
    }
  });
});
