import { numericKeyValue } from '../../streams/index.js';
import type { EntryKey } from '../contracts.js';

/** Read a (dotted) field of an entry, own properties only (never the prototype chain). */
export function getPath(entry: Record<string, unknown>, field: string): unknown {
  if (field.indexOf('.') < 0) return Object.hasOwn(entry, field) ? entry[field] : undefined;
  let current: unknown = entry;
  for (const segment of field.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

type FieldRead = (entry: Record<string, unknown>) => unknown;
const readers = new Map<string, FieldRead>();
const ownReaders = new Map<string, FieldRead>();

/**
 * A reader of one plain field compiled for that one property name, so V8 caches the
 * property's place per field (a shared `entry[field]` site sees every field and goes
 * megamorphic: it was a fifth of a filtered scan). Safe: names passed assertFieldName
 * (letters, digits, `_`, `.`), are checked again and embedded as a JSON string literal.
 * Bounded cache. `body` reads the property, given its name as that literal.
 */
function compiledReader(cache: Map<string, FieldRead>, field: string, body: (name: string) => string): FieldRead {
  if (field.indexOf('.') >= 0) return (entry) => getPath(entry, field);
  let reader = cache.get(field);
  if (reader === undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new Error(`invalid field name ${JSON.stringify(field)}`);
    reader = new Function('entry', body(JSON.stringify(field))) as FieldRead;
    if (cache.size >= 4096) cache.clear();
    cache.set(field, reader);
  }
  return reader;
}

/**
 * A reader of one field as filters see it: a dotted path through own properties, or a
 * plain property (a function can only come from the prototype and counts as missing).
 */
export function fieldReader(field: string): FieldRead {
  return compiledReader(readers, field, (name) => `const v = entry[${name}]; return typeof v === 'function' ? undefined : v;`);
}

/** `getPath` for one field, compiled for plain names as fieldReader is (sorts read one value per entry). */
export function ownReader(field: string): FieldRead {
  return compiledReader(ownReaders, field, (name) => `return Object.hasOwn(entry, ${name}) ? entry[${name}] : undefined;`);
}

/** Strict deep equality for JSON-like values. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !valuesEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** MongoDB's sort bracket of a value: null/missing < numbers < strings < objects < arrays < booleans. */
export function typeRank(value: unknown): number {
  if (value === null || value === undefined) return 0;
  switch (typeof value) {
    case 'number':
    case 'bigint':
      return 1;
    case 'string':
      return 2;
    case 'boolean':
      return 5;
    default:
      return Array.isArray(value) ? 4 : 3;
  }
}

/** Total order over stored values (for sorting). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return 0;
    case 1:
    case 2:
    case 5:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    default: {
      // Objects and arrays are rare sort keys: compare their JSON for a stable order.
      const ja = JSON.stringify(a);
      const jb = JSON.stringify(b);
      return ja < jb ? -1 : ja > jb ? 1 : 0;
    }
  }
}

/** Comparison for `<`, `<=`, `>`, `>=`, BETWEEN: only same-kind scalars compare; else undefined. */
export function compareScalars(a: unknown, b: unknown): number | undefined {
  const ta = typeof a;
  if (a === null || b === null || ta !== typeof b || (ta !== 'number' && ta !== 'string' && ta !== 'boolean')) return undefined;
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}

/**
 * Key order: numeric keys (numbers or numeric strings) numerically first, then other
 * string keys by code unit. This is the default order of every list.
 */
export function compareKeys(a: unknown, b: unknown): number {
  const na = numericKeyValue(a);
  const nb = numericKeyValue(b);
  if (na !== undefined && nb !== undefined) return na - nb || compareText(String(a), String(b));
  if (na !== undefined) return -1;
  if (nb !== undefined) return 1;
  return compareText(String(a), String(b));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The Map key of an entry key: `4` and `"4"` name the same entry (and the same file). */
export function keyId(key: EntryKey | unknown): string {
  return typeof key === 'string' ? key : String(key);
}
