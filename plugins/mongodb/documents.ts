import type { Document } from 'mongodb';
import { BadRequestError } from '../../kernel/index.js';
import type { Entry, EntryKey } from '../sources/index.js';
import { numericKeyValue } from '../streams/index.js';
import { assertSafeDocument } from './values.js';

/**
 * How an entry is stored: its key as `_id` (typed by the key field), the other
 * attributes as they are, and one hidden field `_ko` that encodes key order (numeric
 * keys numerically first, then string keys) as a string, so the default order and the
 * tie-breaker of every sort are the same as on the in-memory sources. `_ko` never
 * leaves this plugin.
 */
export const KEY_ORDER_FIELD = '_ko';

/**
 * The stored revision of an entry (an integer raised by every write): replace, delete and
 * If-Match writes apply only to the revision they were decided on (writes.ts). Never served.
 */
export const REVISION_FIELD = '_rev';

/** Field handles a `database` stream may not declare (they are storage columns). */
export const RESERVED_FIELDS = new Set(['_id', KEY_ORDER_FIELD, REVISION_FIELD]);

/**
 * A string whose byte order is the reference key order: numeric keys ("0" + the IEEE
 * bits made order-preserving, as hex) before string keys ("1" + the key).
 */
export function keyOrder(id: EntryKey): string {
  const numeric = numericKeyValue(id);
  if (numeric === undefined || !Number.isFinite(numeric)) return `1${String(id)}`;
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, numeric === 0 ? 0 : numeric);
  if (bytes[0]! & 0x80) for (let i = 0; i < 8; i++) bytes[i] = ~bytes[i]! & 0xff;
  else bytes[0] = bytes[0]! | 0x80;
  return `0${Buffer.from(bytes).toString('hex')}`;
}

/** Entry -> stored document (key as `_id`, hidden key order). Rejects unsafe names. */
export function toDocument(entry: Entry, keyName: string, id: EntryKey): Document {
  assertSafeDocument(entry);
  const document: Document = { _id: id };
  for (const [name, value] of Object.entries(entry)) {
    if (name === keyName || value === undefined) continue;
    if (RESERVED_FIELDS.has(name)) {
      throw new BadRequestError(`The attribute name "${name}" is reserved by the database source.`, { field: name, rule: 'field' });
    }
    document[name] = value;
  }
  document[KEY_ORDER_FIELD] = keyOrder(id);
  return document;
}

/** Stored document -> entry (key field first, hidden fields dropped). */
export function fromDocument(document: Document, keyName: string): Entry {
  const entry: Entry = { [keyName]: document._id };
  for (const [name, value] of Object.entries(document)) {
    // `__proto__` from a document written by another tool must not become a prototype.
    if (name === '_id' || name === KEY_ORDER_FIELD || name === REVISION_FIELD || name === '__proto__') continue;
    entry[name] = value;
  }
  return entry;
}
