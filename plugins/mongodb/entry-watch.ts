import { createHash } from 'node:crypto';
import { BSON, type ChangeStream, type ChangeStreamDocument, type Collection, type Document } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import type { EntryKey, ExternalChange } from '../sources/index.js';
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

/** The stored document as bytes on the wire, hashed: our write and its change event compare equal. */
function digestOf(document: Document): string {
  return createHash('sha1').update(BSON.serialize(document, { ignoreUndefined: false })).digest('base64');
}

/**
 * Changes made to a `database` stream's collection by other nodes (or other tools), read
 * from a MongoDB change stream and announced as external changes (issue #19), so they
 * reach the change feed, its subscribers and webhooks like API writes and disk edits do.
 *
 * The node's own writes come back through the change stream too and are already announced
 * by the entries layer: each write is remembered (`expect`) by `_id` and the digest of the
 * document written, and its event is skipped when it comes. Pre-images (MongoDB 6+
 * `changeStreamPreAndPostImages` on the collection) are used when the server has them;
 * without them the previous version of an update or delete is known only by its key.
 * A server without change streams (a standalone server) logs once and announces nothing.
 */
export class EntryWatch {
  private readonly expected = new Map<string, Expected[]>();
  private readonly listeners = new Set<(changes: ExternalChange[]) => void>();
  private stream: ChangeStream<Document, ChangeStreamDocument<Document>> | undefined;
  private started = false;
  private closed = false;

  constructor(
    private readonly keyName: string,
    private readonly logger: Logger,
  ) {}

  /** Listen; the first listener starts the change stream once `connected` resolves. */
  listen(listener: (changes: ExternalChange[]) => void, connected: () => Promise<Collection<Document>>): () => void {
    this.listeners.add(listener);
    if (!this.started) {
      this.started = true;
      void connected()
        .then((collection) => this.start(collection))
        .catch((error: unknown) => {
          if (!this.closed) this.logger.warn({ err: { message: (error as Error).message } }, 'changes made by other nodes are not followed: the connection did not come up');
        });
    }
    return () => this.listeners.delete(listener);
  }

  /** Remember an own write before it is sent: a document written, or `null` for a delete. */
  expect(id: EntryKey, document: Document | null): () => void {
    if (this.stream === undefined) return () => undefined;
    const key = JSON.stringify(id);
    const record: Expected = { digest: document === null ? 'delete' : digestOf(document), at: Date.now() };
    let list = this.expected.get(key);
    if (!list) {
      if (this.expected.size >= MAX_EXPECTED) this.expected.delete(this.expected.keys().next().value!);
      this.expected.set(key, (list = []));
    }
    list.push(record);
    // The write failed (or changed nothing): no event will come for it.
    return () => {
      const at = list.indexOf(record);
      if (at !== -1) list.splice(at, 1);
      if (list.length === 0 && this.expected.get(key) === list) this.expected.delete(key);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const stream = this.stream;
    this.stream = undefined;
    await stream?.close().catch(() => undefined);
  }

  private start(collection: Collection<Document>): void {
    if (this.closed) return;
    try {
      const stream = collection.watch<Document, ChangeStreamDocument<Document>>([], { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' });
      stream.on('change', (change) => this.onChange(change));
      stream.on('error', (error: Error) => {
        if (this.closed) return;
        this.logger.info({ err: { message: error.message } }, 'change streams unavailable (a standalone server?): changes made by other nodes do not reach the change feed');
        void stream.close().catch(() => undefined);
        if (this.stream === stream) this.stream = undefined;
      });
      this.stream = stream;
    } catch (error) {
      this.logger.info({ err: { message: (error as Error).message } }, 'change streams unavailable: changes made by other nodes do not reach the change feed');
    }
  }

  private onChange(change: ChangeStreamDocument<Document>): void {
    if (this.closed) return;
    const type = change.operationType;
    if (type !== 'insert' && type !== 'update' && type !== 'replace' && type !== 'delete') return;
    const id = change.documentKey._id as unknown;
    // Documents written by other tools may have any `_id`; entries have string or number keys.
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const after = type === 'delete' ? undefined : change.fullDocument;
    if (type !== 'delete' && !after) return; // updated, then deleted before the lookup: the delete follows
    if (this.ownWrite(id, after === undefined ? 'delete' : digestOf(after))) return;
    const before = 'fullDocumentBeforeChange' in change ? change.fullDocumentBeforeChange : undefined;
    const previous = type === 'insert' ? undefined : before ? fromDocument(before, this.keyName) : { [this.keyName]: id };
    const external: ExternalChange = { key: id, entry: after === undefined ? undefined : fromDocument(after, this.keyName), previous, origin: 'remote' };
    for (const listener of this.listeners) {
      try {
        listener([external]);
      } catch (error) {
        this.logger.error({ err: error }, 'a listener of remote changes failed');
      }
    }
  }

  /** True (and forgotten) when this event is one of our own writes. */
  private ownWrite(id: EntryKey, digest: string): boolean {
    const key = JSON.stringify(id);
    const list = this.expected.get(key);
    if (!list) return false;
    const now = Date.now();
    for (let i = list.length - 1; i >= 0; i--) if (now - list[i]!.at > EXPECTED_TTL_MS) list.splice(i, 1);
    const at = list.findIndex((e) => e.digest === digest);
    if (at !== -1) list.splice(at, 1);
    if (list.length === 0) this.expected.delete(key);
    return at !== -1;
  }
}
