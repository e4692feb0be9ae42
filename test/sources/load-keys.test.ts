import { describe, expect, it } from 'vitest';
import { MemorySource, type Entry } from '../../plugins/sources/index.js';
import { makeDefinition } from './definitions.js';
import { silentLogger } from './harness.js';

/** A source whose load returns exactly the given entries (in that order), and the warnings it logged. */
function listedSource(items: Entry[]): MemorySource & { warnings: unknown[] } {
  const warnings: unknown[] = [];
  const logger = Object.assign(Object.create(silentLogger) as typeof silentLogger, { warn: (obj: unknown) => void warnings.push(obj) });
  const source = new MemorySource(makeDefinition('items'), logger, {
    type: 'listed',
    persistent: false,
    load: async () => items.map((e) => ({ ...e })),
    put: async () => {},
    delete: async () => {},
    truncate: async () => {},
  });
  return Object.assign(source, { warnings });
}

describe('keys at load', () => {
  it('keeps the first of a repeated key, whether the keys came in ascending order so far or not', async () => {
    const cases: Array<{ items: Entry[]; kept: unknown[]; repeated: number }> = [
      { items: [{ id: 1, v: 'a' }, { id: 2 }, { id: 3 }, { id: 2, v: 'again' }], kept: [1, 2, 3], repeated: 1 },
      { items: [{ id: 1 }, { id: 2, v: 'a' }, { id: '2', v: 'b' }, { id: 4 }], kept: [1, 2, 4], repeated: 1 },
      { items: [{ id: '5', v: 'a' }, { id: 3 }, { id: 5, v: 'b' }, { id: 6 }, { id: 5 }], kept: [3, '5', 6], repeated: 2 },
      { items: [{ id: 1 }, { id: 1 }, { id: 1 }], kept: [1], repeated: 2 },
      { items: [{ id: 0 }, { id: -0 }, { id: 1 }], kept: [0, 1], repeated: 1 },
    ];
    for (const { items, kept, repeated } of cases) {
      const source = listedSource(items);
      expect((await source.query({ where: [], orderBy: [] })).map((e) => e.id)).toEqual(kept);
      expect(await source.count([])).toBe(kept.length);
      expect(source.warnings).toHaveLength(repeated);
      const first = items.find((e) => String(e.id) === '2' || String(e.id) === '5');
      if (first) expect((await source.get(first.id as number))?.v).toBe(first.v);
    }
  });

  it('indexes a load in slices (the event loop runs between them) and carries the kept count and key order across them', async () => {
    const count = 30_000;
    const items: Entry[] = Array.from({ length: count }, (_, i) => ({ id: i + 1 }));
    // Late in the load, after several slices: a repeated key (dropped) and a key out of order (kept).
    items.push({ id: 7, v: 'again' }, { id: 0, v: 'zero' }, { id: count + 1 });
    const source = listedSource(items);
    // A reviver slow enough that indexing takes several slices of LOAD_SLICE_MS.
    source.reviveWith((_definition, entry) => {
      const until = performance.now() + 0.002;
      while (performance.now() < until);
      return { entry, problems: [] };
    });
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    await source.open();
    counting = false;
    expect(turns).toBeGreaterThan(2);
    expect(await source.count([])).toBe(count + 2);
    expect(source.warnings).toHaveLength(1);
    expect((await source.get(7))?.v).toBeUndefined();
    expect((await source.get(0))?.v).toBe('zero');
    expect((await source.query({ where: [], orderBy: [], limit: 3 })).map((e) => e.id)).toEqual([0, 1, 2]);
  });
});
