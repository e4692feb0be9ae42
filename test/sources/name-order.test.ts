import { describe, expect, it } from 'vitest';
import { sortNames } from '../../plugins/sources/filebase/name-order.js';

/** A deterministic shuffle (no flaky orders). */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = items.slice();
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('the read order of entry files', () => {
  it('puts integer names in numeric order, whatever order the folder lists them in', () => {
    const names = Array.from({ length: 5000 }, (_, i) => `${i * 7 + 1}.json`);
    for (const seed of [1, 2, 3, 42]) {
      const listed = shuffled(names, seed);
      sortNames(listed);
      expect(listed).toEqual(names);
    }
  });

  it('keeps text order for other names and for one number in two files', () => {
    const mixed = ['10.json', 'b.json', '2.json', 'a.json'];
    sortNames(mixed);
    expect(mixed).toEqual(['10.json', '2.json', 'a.json', 'b.json']);
    const twice = ['2.yml', '10.yaml', '2.yaml'];
    sortNames(twice);
    expect(twice).toEqual(['10.yaml', '2.yaml', '2.yml']);
  });

  it('handles no names, one name and names already in order', () => {
    const none: string[] = [];
    sortNames(none);
    expect(none).toEqual([]);
    const one = ['5.json'];
    sortNames(one);
    expect(one).toEqual(['5.json']);
    const ordered = ['1.json', '2.json', '3.json'];
    sortNames(ordered);
    expect(ordered).toEqual(['1.json', '2.json', '3.json']);
  });
});
