import { describe, expect, it } from 'vitest';
import { LastReadMap } from '../../kernel/index.js';

/** A Map that answers the key it last read without a lookup; every write forgets it. */
describe('LastReadMap', () => {
  it('answers a repeated read, and never a value it no longer holds', () => {
    const map = new LastReadMap<string, { v: number }>();
    const one = { v: 1 };
    map.set('a', one);
    expect(map.get('a')).toBe(one);
    // Equal key, another string object (as a route parameter is): still the same value.
    expect(map.get(['a'].join(''))).toBe(one);
    const two = { v: 2 };
    map.set('a', two);
    expect(map.get('a')).toBe(two);
    map.delete('a');
    expect(map.get('a')).toBeUndefined();
    map.set('a', one);
    expect(map.get('a')).toBe(one);
    map.clear();
    expect(map.get('a')).toBeUndefined();
  });

  it('does not keep a miss: a key set after it was missing is found', () => {
    const map = new LastReadMap<string, number>();
    expect(map.get('x')).toBeUndefined();
    map.set('x', 0);
    expect(map.get('x')).toBe(0);
    expect(map.get('x')).toBe(0);
    expect(map.size).toBe(1);
    expect([...map.values()]).toEqual([0]);
  });

  it('tells an undefined key held in the map from the empty last read', () => {
    const map = new LastReadMap<string | undefined, string>();
    map.set(undefined, 'kept under undefined');
    expect(map.get(undefined)).toBe('kept under undefined');
    expect(map.get(undefined)).toBe('kept under undefined');
  });
});
