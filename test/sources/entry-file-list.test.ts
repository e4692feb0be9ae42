import { describe, expect, it } from 'vitest';
import { EntryFileList, radixSorted, SLICED_SORT_FROM } from '../../plugins/sources/filebase/entry-file-list.js';
import { sortNames } from '../../plugins/sources/filebase/name-order.js';

function listed(names: string[], extension = 'json'): string[] {
  const list = new EntryFileList(extension);
  for (const name of names) list.add(name);
  list.sort();
  return Array.from({ length: list.length }, (_, i) => list.nameAt(i));
}

function expected(names: string[]): string[] {
  const copy = names.slice();
  sortNames(copy);
  return copy;
}

describe('the entry files of a filebase folder', () => {
  it('reads integer names in numeric order, each spelled as it was', () => {
    const names = Array.from({ length: 3000 }, (_, i) => `${(i * 7919) % 3001}.json`);
    expect(listed(names)).toEqual(expected(names));
    expect(listed(['10.json', '2.json', '0.json', '4294967295.json'])).toEqual(['0.json', '2.json', '10.json', '4294967295.json']);
  });

  it('keeps the names as written when one is not an integer with the first extension, wherever it comes', () => {
    for (const odd of ['one.json', '007.json', '4294967296.json', '12345678901.json', '3.yml', '-1.json', '1.5.json']) {
      const names = ['10.json', '2.json', odd, '1.json'];
      expect(listed(names, odd.endsWith('.yml') ? 'yaml' : 'json')).toEqual(expected(names));
      const first = [odd, '10.json', '2.json'];
      expect(listed(first, odd.endsWith('.yml') ? 'yaml' : 'json')).toEqual(expected(first));
    }
  });

  it('gives the integer of each name while every name is one, then -1 for all', () => {
    const list = new EntryFileList('json');
    for (const name of ['10.json', '2.json', '0.json']) list.add(name);
    list.sort();
    expect([0, 1, 2].map((i) => [list.nameAt(i), list.integerAt(i)])).toEqual([['0.json', 0], ['2.json', 2], ['10.json', 10]]);
    list.add('one.json');
    list.sort();
    expect([0, 1, 2, 3].map((i) => list.integerAt(i))).toEqual([-1, -1, -1, -1]);
  });

  it('lists nothing for an empty folder', () => {
    expect(listed([])).toEqual([]);
  });

  it('sorts a long list of integer names in steps, yielding between them, in the order the native sort gives (1M files held the event loop ~95 ms)', async () => {
    // Spread over the whole 32-bit range (both 16-bit halves matter), with repeats and the extremes.
    const count = SLICED_SORT_FROM + 12_345;
    const list = new EntryFileList('json');
    const numbers: number[] = [];
    let seed = 7;
    for (let i = 0; i < count; i++) {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      const n = i === 0 ? 4_294_967_295 : i === 1 ? 0 : i % 1000 === 0 ? 65_536 : seed;
      numbers.push(n);
      list.add(`${n}.json`);
    }
    let pauses = 0;
    await list.sortYielding(() => {
      pauses++;
      return Promise.resolve();
    });
    expect(pauses).toBeGreaterThanOrEqual(4);
    const want = Uint32Array.from(numbers).sort();
    expect(list.length).toBe(count);
    expect(Array.from({ length: count }, (_, i) => list.integerAt(i))).toEqual(Array.from(want));
    expect(list.nameAt(count - 1)).toBe('4294967295.json');
  });

  it('sorts a short list, or one with a name that is not an integer, at once', async () => {
    let pauses = 0;
    const pause = () => {
      pauses++;
      return Promise.resolve();
    };
    const short = new EntryFileList('json');
    for (const name of ['10.json', '2.json', '1.json']) short.add(name);
    await short.sortYielding(pause);
    expect([0, 1, 2].map((i) => short.nameAt(i))).toEqual(['1.json', '2.json', '10.json']);
    const names = Array.from({ length: SLICED_SORT_FROM }, (_, i) => `${SLICED_SORT_FROM - i}.json`).concat('one.json');
    const spelled = new EntryFileList('json');
    for (const name of names) spelled.add(name);
    await spelled.sortYielding(pause);
    expect(Array.from({ length: spelled.length }, (_, i) => spelled.nameAt(i))).toEqual(expected(names));
    expect(pauses).toBe(0);
    // Sorted in place: the array handed in is the one returned.
    const input = Uint32Array.from([3, 65_536, 1, 65_535, 0]);
    const sorted = await radixSorted(input, pause);
    expect(sorted).toBe(input);
    expect(Array.from(sorted)).toEqual([0, 1, 3, 65_535, 65_536]);
  });
});
