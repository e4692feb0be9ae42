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
});
