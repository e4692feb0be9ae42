import type { Entry } from './contracts.js';
import { canonicalInteger } from '../streams/index.js';

/** Largest integer kept as a number key: a small integer (Smi) on every V8 build, so never boxed. */
const SMALL_MAX = 2 ** 30 - 1;

/**
 * The Map key of an entry key, with exactly keyId's identity (`4`, `4.0` and `"4"` name one
 * entry; `"04"` another): small non-negative integers stay numbers, anything else is its
 * keyId text. At 1M entries the text ids were 1M strings (about 24 MB) kept only to be
 * hashed; numbers are stored in the Map's own slots and hash without reading a string.
 */
export function slotOf(key: unknown): string | number {
  if (typeof key === 'number') return Number.isInteger(key) && key >= 0 && key <= SMALL_MAX ? key : String(key);
  if (typeof key === 'string') {
    const n = canonicalInteger(key);
    return n >= 0 && n <= SMALL_MAX ? n : key;
  }
  return String(key);
}

/** Fewest slots a dense part starts with: a stream of a few hundred small keys never pays a hash lookup. */
const DENSE_FLOOR = 1024;

/**
 * The stored entries of an in-memory source by key (see slotOf): keys or key ids in, entries out.
 *
 * Small integer keys (the usual 1, 2, 3...) live in an array indexed by the key itself: a
 * GET of one entry reads one slot instead of probing a hash table (its buckets and its
 * entries: two cache misses on a busy server), and 1M keys cost 4-8 MB instead of about 25.
 * The array is kept at most about twice as long as the integer keys it holds (plus
 * DENSE_FLOOR): sparse keys (1, 10^9) stay in the Map. Invariant: a slot below
 * `dense.length` is never in `map`, so a lookup there needs no second probe.
 */
export class KeyMap {
  private dense: Array<Entry | undefined> = [];
  private denseCount = 0;
  private readonly map = new Map<string | number, Entry>();
  /** Integer slots held in `map` (beyond the dense part), and how many may gather before `densify`. */
  private sparseNumbers = 0;
  private densifyAt = DENSE_FLOOR;

  get size(): number {
    return this.denseCount + this.map.size;
  }

  get(key: unknown): Entry | undefined {
    const slot = slotOf(key);
    if (typeof slot === 'number' && slot < this.dense.length) return this.dense[slot];
    return this.map.get(slot);
  }

  has(key: unknown): boolean {
    return this.get(key) !== undefined;
  }

  set(key: unknown, entry: Entry): void {
    const slot = slotOf(key);
    if (typeof slot !== 'number') {
      this.map.set(slot, entry);
      return;
    }
    const dense = this.dense;
    if (slot < dense.length) {
      if (dense[slot] === undefined) this.denseCount++;
      dense[slot] = entry;
      return;
    }
    // The next key after the last (a load in key order, a create with the next id): the array grows.
    if (slot === dense.length && this.sparseNumbers === 0 && slot < 2 * this.denseCount + DENSE_FLOOR) {
      dense.push(entry);
      this.denseCount++;
      return;
    }
    const size = this.map.size;
    this.map.set(slot, entry);
    if (this.map.size === size) return;
    if (++this.sparseNumbers >= this.densifyAt) this.densify();
  }

  delete(key: unknown): boolean {
    const slot = slotOf(key);
    if (typeof slot === 'number' && slot < this.dense.length) {
      if (this.dense[slot] === undefined) return false;
      this.dense[slot] = undefined;
      this.denseCount--;
      return true;
    }
    if (!this.map.delete(slot)) return false;
    if (typeof slot === 'number') this.sparseNumbers--;
    return true;
  }

  clear(): void {
    this.dense = [];
    this.denseCount = 0;
    this.map.clear();
    this.sparseNumbers = 0;
    this.densifyAt = DENSE_FLOOR;
  }

  /**
   * Many integer keys gathered in the Map (keys set out of order): move them into the array
   * when it would stay at most about twice as long as the integer keys; else try again after
   * twice as many (a doubling threshold keeps the scans linear in all).
   */
  private densify(): void {
    let highest = this.dense.length - 1;
    for (const slot of this.map.keys()) if (typeof slot === 'number' && slot > highest) highest = slot;
    const numbers = this.denseCount + this.sparseNumbers;
    if (highest < 2 * numbers + DENSE_FLOOR) {
      const dense = this.dense;
      // Grown one slot at a time: a write far past the end would turn the array into a dictionary.
      while (dense.length <= highest) dense.push(undefined);
      for (const [slot, entry] of this.map) {
        if (typeof slot !== 'number') continue;
        dense[slot] = entry;
        this.map.delete(slot);
      }
      this.denseCount = numbers;
      this.sparseNumbers = 0;
    }
    this.densifyAt = Math.max(DENSE_FLOOR, 2 * this.sparseNumbers, numbers);
  }
}
