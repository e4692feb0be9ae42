import type { Document } from 'mongodb';
import { AppError } from '../../kernel/index.js';
import type { Entry, EntryKey } from '../sources/index.js';
import { KEY_ORDER_FIELD, REVISION_FIELD } from './documents.js';
import { contentDigest } from './entry-watch.js';

/**
 * The write protocol of the `database` source (issue #15, docs/mongodb.md "Consistency").
 * Several nodes write one collection, so no write may rest on what this node read:
 * - create: `insertOne` only; an existing `_id` is the server's duplicate key (11000, 409).
 * - replace (PUT) and delete: filtered on `{_id, _rev}` of the version the request was
 *   decided on; no match means another node wrote in between: 409 (412 with If-Match).
 * - patch: `$set` of the attributes that differ from the version read and `$unset` of the
 *   ones it dropped, filtered on `{_id}` only (on `{_id, _rev}` with If-Match), so
 *   concurrent PATCHes of different fields both survive; no match means the entry was
 *   deleted meanwhile: 409, and it is not re-created.
 * Every write raises `_rev` by one in the same operation.
 */

/** Served entries remembered per collection (oldest forgotten past this: they are read again). */
const MAX_REVISIONS = 10_000;

/**
 * The revision each served entry was read at, by key and by value (issue #29 item 3): a
 * write decided on `previous` uses the revision only if `previous` holds exactly what was
 * served at it. Identity is not enough: a copy of a served entry (the entries layer clones,
 * a hook rebuilds it) used to find no revision, which made the write unconditional. When no
 * remembered revision matches, the source reads the stored document and compares values.
 */
export class Revisions {
  private readonly seen = new Map<string, { digest: string; revision: number | null }>();

  /** Remember the revision of the document an entry was built from. */
  track(entry: Entry, document: Document): Entry {
    const revision = document[REVISION_FIELD];
    const tag = JSON.stringify(document._id);
    this.seen.delete(tag);
    if (this.seen.size >= MAX_REVISIONS) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(tag, { digest: contentDigest(entry), revision: typeof revision === 'number' ? revision : null });
    return entry;
  }

  /**
   * The `_rev` filter for a write to `id` decided on `previous`: its revision, `null` (matches
   * a missing `_rev`, a document written before revisions or by another tool), or undefined
   * when this source served no version holding exactly `previous` (the caller reads it).
   */
  filterOf(id: EntryKey, previous: Entry | undefined): number | null | undefined {
    if (previous === undefined) return undefined;
    const known = this.seen.get(JSON.stringify(id));
    return known && known.digest === contentDigest(previous) ? known.revision : undefined;
  }

  /** A write whose outcome is unknown (applied or not): what was remembered of `id` no longer holds. */
  forget(id: EntryKey): void {
    this.seen.delete(JSON.stringify(id));
  }

  clear(): void {
    this.seen.clear();
  }
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The field-level update of a PATCH: what `next` sets or removes relative to `previous`
 * (top-level attributes; a nested object is replaced whole, as the entries layer merges).
 */
export function patchUpdate(previous: Entry, next: Document, keyName: string): { $set: Document; $unset: Document } {
  const $set: Document = {};
  const $unset: Document = {};
  for (const [name, value] of Object.entries(next)) {
    if (name === '_id' || name === REVISION_FIELD || name === KEY_ORDER_FIELD) continue;
    if (!Object.hasOwn(previous, name) || !same(previous[name], value)) $set[name] = value;
  }
  for (const name of Object.keys(previous)) {
    if (name !== keyName && !Object.hasOwn(next, name)) $unset[name] = '';
  }
  return { $set, $unset };
}

/** Another writer got there first: 412 when the request named a version (If-Match), else 409. */
export class StaleWriteError extends AppError {
  constructor(key: EntryKey, precondition: boolean | undefined, gone: boolean) {
    super(
      precondition ? 412 : 409,
      precondition
        ? 'The entry has changed since that version was read (If-Match); read it again and retry.'
        : gone
          ? `The entry ${JSON.stringify(key)} was deleted by another request while this one was applied; nothing was written.`
          : `The entry ${JSON.stringify(key)} was changed or deleted by another request while this one was applied; nothing was written: read it again and retry.`,
    );
    this.name = 'StaleWriteError';
  }
}
