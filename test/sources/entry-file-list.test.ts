import { describe, expect, it } from 'vitest';
import { EntryFileList } from '../../plugins/sources/filebase/entry-file-list.js';
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
});
