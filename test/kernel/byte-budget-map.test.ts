import { describe, expect, it } from 'vitest';
import { ByteBudgetMap } from '../../kernel/index.js';

/** The one bounded map every in-memory cache uses (reply, match, result and serialized-entry caches). */
describe('ByteBudgetMap', () => {
  it('holds at most its budget, dropping the oldest first, and refuses a value over the whole budget', () => {
    const map = new ByteBudgetMap<string, number>(100);
    for (let i = 0; i < 10; i++) expect(map.set(`k${i}`, i, 30)).toBe(true);
    expect(map.bytes).toBeLessThanOrEqual(100);
    expect(map.size).toBe(3);
    expect([map.get('k7'), map.get('k8'), map.get('k9'), map.get('k6')]).toEqual([7, 8, 9, undefined]);
    expect(map.set('huge', 0, 101)).toBe(false);
    expect(map.get('huge')).toBeUndefined();
    // Nothing was dropped to make room for a value that was refused anyway.
    expect(map.size).toBe(3);
  });

  it('with touchOnGet, drops the least recently read instead', () => {
    const map = new ByteBudgetMap<string, number>(90, { touchOnGet: true });
    map.set('a', 1, 30);
    map.set('b', 2, 30);
    map.set('c', 3, 30);
    map.get('a');
    map.set('d', 4, 30);
    expect([map.get('a'), map.get('b'), map.get('c'), map.get('d')]).toEqual([1, undefined, 3, 4]);
  });

  it('keeps its count bound, counts a replaced value once, and forgets on delete and clear', () => {
    const map = new ByteBudgetMap<number, string>(1_000_000, { maxItems: 10 });
    for (let i = 0; i < 50; i++) map.set(i, 'v', 10);
    expect(map.size).toBe(10);
    map.set(49, 'w', 25);
    expect(map.bytes).toBe(9 * 10 + 25);
    expect(map.delete(49)).toBe(true);
    expect(map.delete(49)).toBe(false);
    expect(map.bytes).toBe(90);
    map.clear();
    expect([map.size, map.bytes]).toEqual([0, 0]);
  });

  it('a large map evicts in batches, down to three quarters of its budget, and stays bounded', () => {
    const map = new ByteBudgetMap<number, number>(10_000);
    for (let i = 0; i < 100_000; i++) {
      map.set(i, i, 10);
      expect(map.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(map.get(99_999)).toBe(99_999);
    // After the last batch, between three quarters and all of the budget is used.
    expect(map.bytes).toBeGreaterThanOrEqual(7_500);
  });

  it('a budget of 0 keeps nothing (the cache is off)', () => {
    const map = new ByteBudgetMap<string, number>(0);
    expect(map.set('a', 1, 1)).toBe(false);
    expect(map.size).toBe(0);
  });

  it('tells `onDrop` of every value that leaves, however it leaves', () => {
    const dropped: string[] = [];
    const map = new ByteBudgetMap<string, string>(10, { onDrop: (value) => void dropped.push(value) });
    map.set('a', 'A', 4);
    map.set('b', 'B', 4);
    map.set('c', 'C', 4); // evicts a
    map.set('b', 'B2', 4); // replaces b
    map.delete('c');
    map.set('d', 'D', 4);
    map.clear();
    expect(dropped).toEqual(['A', 'B', 'C', 'B2', 'D']);
  });
});
