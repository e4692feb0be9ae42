import type { Entry } from './contracts.js';

/** Largest integer kept as a number key: a small integer (Smi) on every V8 build, so never boxed. */
const SMALL_MAX = 2 ** 30 - 1;

/** Whether `text` is a canonical integer 0..SMALL_MAX (`"4"`, not `"04"`, `"+4"` or `"4.0"`). */
function isSmallIntegerText(text: string): boolean {
  const length = text.length;
  if (length === 0 || length > 10) return false;
  const first = text.charCodeAt(0);
  if (first === 48) return length === 1;
  let n = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return false;
    n = n * 10 + c;
  }
  return n <= SMALL_MAX;
}

/**
 * The Map key of an entry key, with exactly keyId's identity (`4`, `4.0` and `"4"` name one
 * entry; `"04"` another): small non-negative integers stay numbers, anything else is its
 * keyId text. At 1M entries the text ids were 1M strings (about 24 MB) kept only to be
 * hashed; numbers are stored in the Map's own slots and hash without reading a string.
 */
export function slotOf(key: unknown): string | number {
  if (typeof key === 'number') return Number.isInteger(key) && key >= 0 && key <= SMALL_MAX ? key : String(key);
  if (typeof key === 'string') return isSmallIntegerText(key) ? Number(key) : key;
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
