import { describe, expect, it } from 'vitest';
import { MatchCache } from '../../plugins/sources/match-cache.js';
import type { WhereClause } from '../../plugins/sources/index.js';
import { builtInHarness } from './harness.js';
import { field, makeDefinition } from './definitions.js';

const books: WhereClause[] = [{ boolean: 'and', field: 'category', operator: '=', value: 'books' }];

describe('cached filtered results', () => {
  it('follow every write: a repeated filter sees creates, updates and deletes', async () => {
    const harness = await builtInHarness()();
    try {
      const source = await harness.create(makeDefinition('items', { source: { type: 'filebase' }, fields: [field('id', 'integer'), field('category'), field('year', 'integer')] }));
      await source.put(1, { id: 1, category: 'books', year: 2001 });
      await source.put(2, { id: 2, category: 'music', year: 1999 });
      const query = { where: books, orderBy: [{ field: 'year', direction: 'desc' as const }] };
      const ids = async (): Promise<unknown[]> => (await source.paginate(query)).entries.map((e) => e.id);

      expect(await ids()).toEqual([1]);
      await source.put(3, { id: 3, category: 'books', year: 2010 });
      expect(await ids()).toEqual([3, 1]);
      expect(await source.count(books)).toBe(2);
      await source.put(2, { id: 2, category: 'books', year: 2005 });
      expect(await ids()).toEqual([3, 2, 1]);
      await source.delete(3);
      expect(await ids()).toEqual([2, 1]);
      expect((await source.paginate({ ...query, skip: 1, limit: 1 })).entries.map((e) => e.id)).toEqual([1]);
      await source.truncate();
      expect(await ids()).toEqual([]);
      expect(await source.count(books)).toBe(0);
    } finally {
      await harness.cleanup();
    }
  });
});

describe('MatchCache', () => {
  it('stays within its budget of bytes, dropping the least recently used', () => {
    // 2 references (16 bytes) + a 1-char key (2 bytes) = 18 bytes a list: two fit in 40.
    const cache = new MatchCache(40);
    const list = (n: number): Array<Record<string, unknown>> => Array.from({ length: n }, (_, id) => ({ id }));
    cache.set('a', list(2));
    cache.set('b', list(2));
    cache.get('a');
    cache.set('c', list(2));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toHaveLength(2);
    expect(cache.get('c')).toHaveLength(2);
    cache.set('huge', list(6));
    expect(cache.bytes).toBeLessThanOrEqual(40);
    expect(cache.get('huge')).toBeUndefined();
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('MatchCache with thousands of filters (#16: evicts in batches, one iterator each)', () => {
  it('stays within both bounds and keeps the newest', () => {
    const cache = new MatchCache(50_000, 500);
    const list = Array.from({ length: 10 }, (_, id) => ({ id }));
    for (let i = 0; i < 20_000; i++) {
      cache.set(`f${i}`, list);
      expect(cache.bytes).toBeLessThanOrEqual(50_000);
    }
    expect(cache.get('f19999')).toHaveLength(10);
    expect(cache.get('f0')).toBeUndefined();
    const kept = Array.from({ length: 20_000 }, (_, i) => cache.get(`f${i}`)).filter((l) => l !== undefined).length;
    expect(kept).toBeLessThanOrEqual(500);
    expect(kept).toBeGreaterThanOrEqual(370);
  });
});

describe('MatchCache with many filters that match nothing', () => {
  it('counts an empty list and caps the number of lists', () => {
    const cache = new MatchCache(1000, 3);
    for (let i = 0; i < 10; i++) cache.set(`none-${i}`, []);
    const kept = Array.from({ length: 10 }, (_, i) => cache.get(`none-${i}`)).filter((l) => l !== undefined);
    expect(kept).toHaveLength(3);
    expect(cache.get('none-9')).toEqual([]);
  });
});

describe('MatchCache with huge filter values (hostile input, issue #13)', () => {
  it('counts the key in its bytes and never keeps a key over the length cap', () => {
    const cache = new MatchCache(64 * 1024, 1024);
    for (let i = 0; i < 50; i++) cache.set(`${i}:${'x'.repeat(4000)}`, []);
    expect(cache.bytes).toBeLessThanOrEqual(64 * 1024);
    cache.set('y'.repeat(1_000_000), []);
    expect(cache.get('y'.repeat(1_000_000))).toBeUndefined();
    expect(cache.bytes).toBeLessThanOrEqual(64 * 1024);
  });
});
