import type { Entry } from './contracts.js';
import { canonicalInteger } from './criteria/values.js';

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

/** The stored entries of an in-memory source by key (see slotOf): keys or key ids in, entries out. */
export class KeyMap {
  private readonly map = new Map<string | number, Entry>();

  get size(): number {
    return this.map.size;
  }

  get(key: unknown): Entry | undefined {
    return this.map.get(slotOf(key));
  }

  has(key: unknown): boolean {
    return this.map.has(slotOf(key));
  }

  set(key: unknown, entry: Entry): void {
    this.map.set(slotOf(key), entry);
  }

  delete(key: unknown): boolean {
    return this.map.delete(slotOf(key));
  }

  clear(): void {
    this.map.clear();
  }
}
