import { describe, expect, it } from 'vitest';
import { keyId } from '../../plugins/sources/index.js';
import { KeyMap, slotOf } from '../../plugins/sources/key-map.js';

// Keys that keyId tells apart or conflates: the key map must do exactly the same.
const KEYS: unknown[] = [
  0, -0, '0', '00', 4, 4.0, '4', '04', '+4', ' 4', '4 ', '4.0', 4.5, '4.5', -1, '-1', '-0',
  2 ** 30 - 1, String(2 ** 30 - 1), 2 ** 30, String(2 ** 30), 9999999999, '9999999999', '99999999999',
  2 ** 53, 1e21, '1e+21', NaN, 'NaN', Infinity, 'Infinity', '', 'abc', '٣', true, 'true', null, 'null',
];

describe('the key map of in-memory sources', () => {
  it('names one entry by two keys exactly when keyId does', () => {
    for (const a of KEYS) {
      for (const b of KEYS) {
        expect([a, b, Object.is(slotOf(a), slotOf(b)) || slotOf(a) === slotOf(b)]).toEqual([a, b, keyId(a) === keyId(b)]);
      }
    }
  });

  it('keeps small integer keys as numbers, anything else as its key id', () => {
    expect(slotOf('123456')).toBe(123456);
    expect(slotOf(123456)).toBe(123456);
    expect(slotOf('0123')).toBe('0123');
    expect(slotOf(2 ** 30)).toBe(String(2 ** 30));
    expect(slotOf('uuid-1')).toBe('uuid-1');
  });

  it('stores, finds and removes entries by key or key id', () => {
    const map = new KeyMap();
    map.set('7', { id: 7 });
    map.set('x', { id: 'x' });
    expect(map.get(7)).toEqual({ id: 7 });
    expect(map.has('7')).toBe(true);
    expect(map.get('07')).toBeUndefined();
    expect(map.size).toBe(2);
    expect(map.delete(7)).toBe(true);
    expect(map.get('7')).toBeUndefined();
    map.clear();
    expect(map.size).toBe(0);
  });
});

describe('the key map against a plain Map of key ids (dense and sparse integer keys)', () => {
  // A small deterministic generator: the same sequence on every run.
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
  }

  const scenarios: Array<[string, (next: () => number, i: number) => unknown]> = [
    ['keys in ascending order', (_next, i) => i + 1],
    ['keys in random order', (next) => 1 + Math.floor(next() * 5000)],
    ['sparse keys', (next) => Math.floor(next() * 2 ** 30)],
    ['mixed integer and text keys', (next, i) => (i % 3 === 0 ? `k${Math.floor(next() * 500)}` : i % 3 === 1 ? String(Math.floor(next() * 3000)) : Math.floor(next() * 3000))],
  ];

  for (const [name, keyAt] of scenarios) {
    it(`agrees on every get, has, delete and size: ${name}`, () => {
      const next = random(name.length);
      const map = new KeyMap();
      const reference = new Map<string, object>();
      for (let i = 0; i < 20_000; i++) {
        const key = keyAt(next, i);
        const id = keyId(key);
        if (next() < 0.2) {
          expect(map.delete(key)).toBe(reference.delete(id));
        } else {
          const entry = { id: key, version: i };
          map.set(key, entry);
          reference.set(id, entry);
        }
        if (i % 997 === 0) expect(map.size).toBe(reference.size);
      }
      expect(map.size).toBe(reference.size);
      for (const [id, entry] of reference) {
        expect(map.get(id)).toBe(entry);
        expect(map.has(id)).toBe(true);
      }
      for (let probe = 0; probe < 6000; probe++) expect(map.get(probe)).toBe(reference.get(String(probe)));
      map.clear();
      expect(map.size).toBe(0);
      expect(map.get(1)).toBeUndefined();
    });
  }
});
