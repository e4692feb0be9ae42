import type { ChangeStreamDocument, Document } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import type { Entry, EntryKey, ExternalChange } from '../sources/index.js';
import { fromDocument } from './documents.js';

/** Own writes remembered while their change event is awaited; past this the oldest is forgotten. */
const MAX_EXPECTED = 10_000;
/** An own write whose event has not come after this long never will (the write failed after all). */
const EXPECTED_TTL_MS = 60_000;

interface Expected {
  /** Digest of the document written, or `delete`. */
  digest: string;
  at: number;
}

/**
 * What an entry holds, independent of key order and of the storage columns (`_ko`, `_rev`):
 * our write, as we predicted it, and its change event compare equal. A PATCH is predicted
 * from the version it was decided on, so a concurrent write by another node to other
 * fields makes them differ: the event is then announced as remote (it carries that change).
 */
export function contentDigest(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (value instanceof Date) return `D${value.toISOString()}`;
  if (Array.isArray(value)) return `[${value.map(contentDigest).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${contentDigest(record[k])}`).join(',')}}`;
}

/**
 * Changes made to a `database` stream's collection by other nodes (or other tools), read
 * from the collection's change stream (collection-watcher.ts, shared with the caches) and
 * announced as external changes (issue #19), so they reach the change feed, its
 * subscribers and webhooks like API writes and disk edits do.
 *
 * The node's own writes come back through the change stream too and are already announced
 * by the entries layer: each write is remembered (`expect`) by `_id` and the digest of the
 * entry as it will be stored, and its event is skipped when it comes. Pre-images (MongoDB 6+
 * `changeStreamPreAndPostImages` on the collection) are used when the server has them;
 * without them the previous version of an update or delete is known only by its key.
 */
export class EntryWatch {
  private readonly expected = new Map<string, Expected[]>();
  /** Per key, the content of this node's write last recognised (bounded like `expected`). */
  private readonly lastOwn = new Map<string, string>();
  private readonly listeners = new Set<(changes: ExternalChange[]) => void>();

  constructor(
    private readonly keyName: string,
    private readonly logger: Logger,
  ) {}

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  listen(listener: (changes: ExternalChange[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Remember an own write before it is sent: the entry as it will be stored, or `null` for a
   * delete. Returns what forgets it again when the write failed (no event will come).
   */
  expect(id: EntryKey, entry: Entry | null): () => void {
    if (!this.listening) return () => undefined;
    const key = JSON.stringify(id);
    const record: Expected = { digest: entry === null ? 'delete' : contentDigest(entry), at: Date.now() };
    let list = this.expected.get(key);
    if (!list) {
      if (this.expected.size >= MAX_EXPECTED) this.expected.delete(this.expected.keys().next().value!);
      this.expected.set(key, (list = []));
    }
    list.push(record);
    return () => {
      const at = list.indexOf(record);
      if (at !== -1) list.splice(at, 1);
      if (list.length === 0 && this.expected.get(key) === list) this.expected.delete(key);
    };
  }

  close(): void {
    this.listeners.clear();
    this.expected.clear();
    this.lastOwn.clear();
  }

  /**
   * One event of the collection's change stream. Says what it was: this node's own write
   * (already announced by the entries layer), another writer's (announced now), or not an
   * entry change at all (or nobody listens).
   */
  handle(change: ChangeStreamDocument<Document>): 'own' | 'remote' | 'ignored' {
    if (!this.listening) return 'ignored';
    const type = change.operationType;
    if (type !== 'insert' && type !== 'update' && type !== 'replace' && type !== 'delete') return 'ignored';
    const id = change.documentKey._id as unknown;
    // Documents another tool wrote with a key no entry can have (an ObjectId) are not entries.
    if (typeof id !== 'string' && typeof id !== 'number') return 'ignored';
    const afterDocument = type === 'delete' ? undefined : change.fullDocument;
    if (type !== 'delete' && !afterDocument) return 'ignored'; // updated, then deleted before the lookup: the delete follows
    const after = afterDocument === undefined ? undefined : fromDocument(afterDocument, this.keyName);
    if (this.ownWrite(id, after === undefined ? 'delete' : contentDigest(after))) return 'own';
    const before = 'fullDocumentBeforeChange' in change ? change.fullDocumentBeforeChange : undefined;
    const previous = type === 'insert' ? undefined : before ? fromDocument(before, this.keyName) : { [this.keyName]: id };
    const external: ExternalChange = { key: id, entry: after, previous, origin: 'remote' };
    for (const listener of this.listeners) {
      try {
        listener([external]);
      } catch (error) {
        this.logger.error({ err: error }, 'a listener of remote changes failed');
      }
    }
    return 'remote';
  }

  /**
   * True when this event is one of our own writes. An update's event carries the document
   * as the server finds it when it sends the event (`updateLookup`), so after two quick
   * writes the first event already shows the second's content: a match therefore also
   * settles the older writes of that key, and the content last matched stays recognised
   * for the events still on their way (a later event with that same content changes nothing).
   */
  private ownWrite(id: EntryKey, digest: string): boolean {
    const key = JSON.stringify(id);
    const list = this.expected.get(key);
    if (list) {
      const now = Date.now();
      for (let i = list.length - 1; i >= 0; i--) if (now - list[i]!.at > EXPECTED_TTL_MS) list.splice(i, 1);
      const at = list.findIndex((e) => e.digest === digest);
      if (at !== -1) {
        list.splice(0, at + 1);
        if (list.length === 0) this.expected.delete(key);
        this.remember(key, digest);
        return true;
      }
      if (list.length === 0) this.expected.delete(key);
    }
    if (digest !== 'delete' && this.lastOwn.get(key) === digest) return true;
    // Someone else's change: our last content no longer describes the entry.
    this.lastOwn.delete(key);
    return false;
  }

  private remember(key: string, digest: string): void {
    this.lastOwn.delete(key);
    if (this.lastOwn.size >= MAX_EXPECTED) this.lastOwn.delete(this.lastOwn.keys().next().value!);
    this.lastOwn.set(key, digest);
  }
}
