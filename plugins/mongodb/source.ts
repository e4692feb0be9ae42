import type { Collection, Document, Filter } from 'mongodb';
import { MongoServerSelectionError } from 'mongodb';
import { AppError, KeyedLock, type Logger } from '../../kernel/index.js';
import { SourceClosedError } from '../sources/index.js';
import type { Entry, EntryKey, ExternalChange, Source, SourceCapabilities, SourceContext, SourcePage, SourceQuery, WhereClause, WriteIntent } from '../sources/index.js';
import { keyKindOf, typedKey, type KeyKind, type StreamDefinition } from '../streams/index.js';
import { COUNTERS_COLLECTION, requireCollectionName } from './collection-name.js';
import type { MongoConnection, MongoConnections } from './connections.js';
import { buildFilter, buildSort } from './criteria.js';
import { fromDocument, KEY_ORDER_FIELD, keyOrder, REVISION_FIELD, toDocument } from './documents.js';
import { contentDigest, EntryWatch } from './entry-watch.js';
import { isDuplicateKey, mapMongoError } from './errors.js';
import { CollectionWatcher, type StoreEvent } from './collection-watcher.js';
import { openReplay } from './change-replay.js';
import type { FollowedChanges } from './followed-changes.js';
import type { IndexBuilds } from './index-builds.js';
import { ensureIndexes, indexCount } from './indexes.js';
import { patchUpdate, Revisions, StaleWriteError } from './writes.js';

/** How long closing a source waits for an index build still running (then it lets it finish alone). */
/** Tries of a write with no intent while other writers keep replacing the entry in between. */
const MAX_REPLACE_ATTEMPTS = 20;
const INDEX_BUILD_CLOSE_WAIT_MS = 2000;

/** Default longest time one read may run on the server (`query_timeout_ms`). */
export const QUERY_TIME_LIMIT_MS = 5000;

export interface MongoSourceOptions {
  /** How long a request waits for a connection that is not up yet before a 503. */
  connectWaitMs: number;
  /** `maxTimeMS` of every read and read-modify operation (default QUERY_TIME_LIMIT_MS). */
  queryTimeoutMs?: number;
  /** Where background index builds are registered (for /readyz details); absent: a private one. */
  indexBuilds?: IndexBuilds;
  /** Backoff of the change stream that keeps caches in step (watchStore). */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** Where every followed change is published with its position (realtime across nodes). */
  changes?: FollowedChanges;
}

/** A stored entry: `_id` is the key (a string or a number, never an ObjectId). */
interface StoredDocument extends Document {
  _id: EntryKey;
}

/** `_id` holding a number (`$type: "number"` covers int, long, double and decimal). */
const NUMERIC_ID = { _id: { $type: 'number' } } as unknown as Filter<StoredDocument>;

interface CounterDocument {
  _id: string;
  seq: number;
}

/**
 * The `database` source: the entries of one stream in one MongoDB collection. The key
 * is `_id`; filters, sorts, skip/limit and counts run on the server with the reference
 * semantics (criteria.ts). Writes use the connection's write concern (majority +
 * journal by default), so an acknowledged write survives a failover. Writes to one key
 * are serialized in this process; across processes MongoDB's document atomicity holds.
 */
export class MongoSource implements Source {
  readonly type = 'database';
  readonly capabilities: SourceCapabilities = { inMemory: false, persistent: true, atomicWrites: true };
  private readonly definition: StreamDefinition;
  private readonly keyName: string;
  private readonly kind: KeyKind;
  private readonly collectionName: string;
  private readonly connection: MongoConnection;
  private readonly logger: Logger;
  private readonly lock = new KeyedLock();
  /** Protected fields are never needed on the wire: lists do not even fetch them. */
  private readonly listProjection: Document;
  private opening: Promise<void> | undefined;
  private opened = false;
  /** The background index build started at open (tests and shutdown wait for it). */
  indexing: Promise<void> = Promise.resolve();
  private closed = false;
  private counterSeeded = false;
  /** The counter is known to be at least this (explicit integer keys below it need no raise). */
  private counterFloor = -Infinity;
  private readonly revisions = new Revisions();
  private readonly storeListeners = new Set<(event: StoreEvent) => void>();
  private watcher: CollectionWatcher | undefined;
  /** Forgets this source in the followed changes (close). */
  private unfollow: (() => void) | undefined;
  private readonly maxTimeMS: number;
  /** Changes made by other nodes, announced to the change feed (see onExternalChange). */
  private readonly remote: EntryWatch;

  constructor(context: SourceContext, connections: MongoConnections, private readonly options: MongoSourceOptions) {
    this.definition = context.definition;
    this.keyName = context.definition.config.key_name;
    this.kind = keyKindOf(context.definition);
    const source = context.definition.config.source;
    this.collectionName = requireCollectionName(source.table ?? context.definition.id, context.definition.file ?? `stream ${context.definition.id}`);
    this.connection = connections.get(typeof source.connection === 'string' ? source.connection : 'default').acquire();
    this.logger = context.logger.child({ collection: this.collectionName });
    this.maxTimeMS = options.queryTimeoutMs ?? QUERY_TIME_LIMIT_MS;
    this.remote = new EntryWatch(this.keyName, this.logger);
    this.listProjection = { [KEY_ORDER_FIELD]: 0 };
    for (const field of context.definition.fields) {
      if (field.protected && field.handle !== this.keyName) this.listProjection[field.handle] = 0;
    }
  }

  private get collection(): Collection<StoredDocument> {
    return this.connection.db.collection<StoredDocument>(this.collectionName);
  }

  private get counters(): Collection<CounterDocument> {
    return this.connection.db.collection<CounterDocument>(COUNTERS_COLLECTION);
  }

  /** Run one operation: opened first, driver errors mapped (409 duplicate, 503 unreachable). */
  private async run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) throw new SourceClosedError(this.definition.id);
    await this.open();
    try {
      return await operation();
    } catch (error) {
      throw mapMongoError(error, this.connection.name, this.keyName);
    }
  }

  open(): Promise<void> {
    if (this.opened) return Promise.resolve();
    if (this.closed) return Promise.reject(new SourceClosedError(this.definition.id));
    this.opening ??= (async () => {
      await this.connection.whenConnected(this.options.connectWaitMs);
      // Indexes build in the background: the stream serves meanwhile (unique values are
      // still checked by the rule on each node; the index adds the cross-node guarantee
      // once built), and readiness never waits for a build (docs/mongodb.md).
      const builds = this.options.indexBuilds;
      const build = (progress: (done: number) => void): Promise<void> =>
        ensureIndexes(this.collection, this.definition, this.logger, progress, (field, index, failure) => {
          if (!failure) builds?.uniqueBuilt(this.definition.id, index);
          else builds?.uniqueFailed({ stream: this.definition.id, collection: this.collectionName, field, index, ...failure });
        });
      this.indexing = this.options.indexBuilds
        ? this.options.indexBuilds.start(this.definition.id, this.collectionName, indexCount(this.definition), build)
        : build(() => undefined).catch((error: unknown) => this.logger.error({ err: { message: (error as Error).message } }, 'index build failed'));
      this.opened = true;
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /**
   * Caches of this stream follow every node's writes: a change stream on the collection,
   * started with the first listener (only streams with `config.cache` have one).
   */
  watchStore(listener: (event: StoreEvent) => void): () => void {
    this.storeListeners.add(listener);
    this.follow();
    return () => this.storeListeners.delete(listener);
  }

  /**
   * Entries changed by other nodes sharing the collection reach this node's change feed
   * (issue #19); this node's own writes are not announced again (entry-watch.ts).
   */
  onExternalChange(listener: (changes: ExternalChange[]) => void): () => void {
    const off = this.remote.listen(listener);
    this.follow();
    return off;
  }

  /** One change stream per collection, for the caches and the change feed alike, once connected. */
  private follow(): void {
    if (this.watcher || this.closed) return;
    const watcher = new CollectionWatcher(
      () => this.collection as unknown as Collection<Document>,
      (event) => {
        for (const l of [...this.storeListeners]) l(event);
      },
      this.logger,
      { initialMs: this.options.retryInitialMs ?? 200, maxMs: this.options.retryMaxMs ?? 30_000 },
      (change, position) => {
        const origin = this.remote.handle(change);
        const key = 'documentKey' in change ? (change.documentKey as { _id?: unknown } | undefined)?._id : undefined;
        const changes = this.options.changes;
        if (changes === undefined) return;
        const after = 'fullDocument' in change && change.fullDocument ? fromDocument(change.fullDocument, this.keyName) : undefined;
        const before = 'fullDocumentBeforeChange' in change && change.fullDocumentBeforeChange ? fromDocument(change.fullDocumentBeforeChange, this.keyName) : undefined;
        changes.publish({
          stream: this.definition.id,
          collection: this.collectionName,
          operationType: change.operationType,
          key,
          origin,
          position,
          entry: after,
          previous: before,
          coverage: watcher.coverage,
          db: this.connection.db,
        });
      },
      () => this.connection.db,
    );
    this.watcher = watcher;
    this.unfollow = this.options.changes?.following(
      this.definition.id,
      () => this.connection.db,
      () => watcher.coverage,
      (from) => openReplay(this.collection as unknown as Collection<Document>, this.definition.id, this.keyName, from),
    );
    void this.connection
      .whenConnected(2 ** 31 - 1)
      .then(() => watcher.start())
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.lock.idle();
    await this.watcher?.stop();
    // A closed source's closures (its connection, collection and coverage) are no longer
    // followed: they kept the closed source alive and its database among the followed ones.
    this.unfollow?.();
    this.remote.close();
    // A build in flight finishes on the server anyway. Its answer is awaited a little (so a short
    // build reports), never for long: a shutdown must not wait for a long index build.
    await Promise.race([this.indexing, new Promise((resolve) => setTimeout(resolve, INDEX_BUILD_CLOSE_WAIT_MS).unref())]);
    this.options.indexBuilds?.forget(this.definition.id);
    this.closed = true;
    await this.connection.release();
  }

  async healthy(): Promise<boolean> {
    if (this.closed) return false;
    // A not-ready node gets no traffic, so no request would ever open a source that
    // failed at boot: readiness checks open it once the connection is back.
    if (!this.opened && this.connection.isReady()) void this.open().catch(() => undefined);
    return this.opened && this.connection.isReady();
  }

  async drain(): Promise<void> {
    await this.lock.idle();
  }

  async get(key: EntryKey): Promise<Entry | undefined> {
    const id = typedKey(key, this.kind);
    return this.run(async () => {
      const document = await this.collection.findOne({ _id: id }, { projection: { [KEY_ORDER_FIELD]: 0 }, maxTimeMS: this.maxTimeMS });
      return document ? this.entryOf(document) : undefined;
    });
  }

  async getMany(keys: EntryKey[]): Promise<Entry[]> {
    const ids: EntryKey[] = [];
    const seen = new Set<string>();
    for (const key of keys) {
      let id: EntryKey;
      try {
        id = typedKey(key, this.kind);
      } catch {
        continue; // a malformed related key names no entry
      }
      const tag = `${typeof id}:${String(id)}`;
      if (!seen.has(tag)) {
        seen.add(tag);
        ids.push(id);
      }
    }
    if (ids.length === 0) return [];
    return this.run(async () => {
      const documents = await this.collection.find({ _id: { $in: ids } }, { projection: this.listProjection, maxTimeMS: this.maxTimeMS }).toArray();
      return documents.map((d) => this.entryOf(d));
    });
  }

  async query(query: SourceQuery): Promise<Entry[]> {
    const filter = buildFilter(query.where, this.keyName) as Filter<StoredDocument>;
    const sort = buildSort(query.orderBy, this.keyName);
    const skip = Math.max(0, Math.trunc(query.skip ?? 0));
    const limit = query.limit === undefined ? undefined : Math.max(0, Math.trunc(query.limit));
    if (limit === 0) return this.run(async () => []);
    // (an empty page still checks that the source is open and reachable)
    return this.run(async () => {
      // A request-built filter (a LIKE regex, a scan of a large collection) must not hold
      // the server: past `query_timeout_ms` the server aborts it and the client gets a 503.
      const cursor = this.collection.find(filter, { projection: this.listProjection, sort, skip, maxTimeMS: this.maxTimeMS });
      if (limit !== undefined) cursor.limit(limit);
      const documents = await cursor.toArray();
      return documents.map((d) => this.entryOf(d));
    });
  }

  async count(where: WhereClause[]): Promise<number> {
    const filter = buildFilter(where, this.keyName) as Filter<StoredDocument>;
    return this.run(() => this.collection.countDocuments(filter, { maxTimeMS: this.maxTimeMS }));
  }

  async paginate(query: SourceQuery): Promise<SourcePage> {
    const [entries, total] = await Promise.all([this.query(query), this.count(query.where)]);
    return { entries, total };
  }

  /** A served entry, its revision remembered for a later conditional write (writes.ts). */
  private entryOf(document: Document): Entry {
    return this.revisions.track(fromDocument(document, this.keyName), document);
  }

  /**
   * One write, one round trip (writes.ts): insert-only create, `{_id, _rev}`-conditional
   * replace, field-level `$set`/`$unset` patch. Resolves with the entry as stored.
   */
  async put(key: EntryKey, entry: Entry, intent?: WriteIntent): Promise<Entry> {
    const id = typedKey(key, this.kind);
    const document = toDocument(entry, this.keyName, id);
    const previous = intent?.previous;
    const mode = intent?.mode;
    return this.lock.run(keyOrder(id), () =>
      this.run(async () => {
        // Remembered before it is sent, so its change event (which may come before the reply)
        // is recognised as this node's own write and not announced again (entry-watch.ts).
        const unexpect = this.remote.expect(id, this.expectedEntry(id, document, previous, mode));
        try {
          return await this.write(key, id, document, intent);
        } catch (error) {
          unexpect();
          this.forgetIfAmbiguous(id, error);
          throw error;
        }
      }),
    );
  }

  /** The entry as a write will store it (a PATCH applies its changes to the version read). */
  private expectedEntry(id: EntryKey, document: Document, previous: Entry | undefined, mode: WriteIntent['mode'] | undefined): Entry {
    if (mode !== 'patch' || previous === undefined) return fromDocument(document, this.keyName);
    const { $set, $unset } = patchUpdate(previous, document, this.keyName);
    const expected: Entry = { ...previous, ...$set, [this.keyName]: id };
    for (const name of Object.keys($unset)) delete expected[name];
    return expected;
  }

  private async write(key: EntryKey, id: EntryKey, document: Document, intent: WriteIntent | undefined): Promise<Entry> {
    const previous = intent?.previous;
    const mode = intent?.mode;
    if (mode === undefined) {
      // No intent (the bare Source contract: create or replace, last write wins).
      await this.raiseCounterFor(id);
      await this.replaceAnyVersion(key, id, document);
      delete document[KEY_ORDER_FIELD];
      return this.entryOf(document);
    }
    if (mode === 'create' || previous === undefined) {
      await this.raiseCounterFor(id);
      document[REVISION_FIELD] = 1;
      await this.collection.insertOne(document as StoredDocument);
      delete document[KEY_ORDER_FIELD];
      return this.entryOf(document);
    }
    const decided = mode === 'patch' && !intent?.precondition ? undefined : await this.revisionOf(id, previous);
    if (decided === 'missing' || decided === 'changed') throw new StaleWriteError(key, intent?.precondition, decided === 'missing' && mode === 'patch');
    const revision = decided;
    if (mode === 'patch') {
      const filter: Document = { _id: id };
      if (intent?.precondition && revision !== undefined) filter[REVISION_FIELD] = revision;
      const { $set, $unset } = patchUpdate(previous, document, this.keyName);
      const update: Document = { $inc: { [REVISION_FIELD]: 1 } };
      if (Object.keys($set).length > 0) update.$set = $set;
      if (Object.keys($unset).length > 0) update.$unset = $unset;
      const stored = await this.collection.findOneAndUpdate(filter as Filter<StoredDocument>, update, {
        returnDocument: 'after',
        projection: { [KEY_ORDER_FIELD]: 0 },
        maxTimeMS: this.maxTimeMS,
      });
      if (!stored) throw new StaleWriteError(key, intent?.precondition, !intent?.precondition);
      return this.entryOf(stored);
    }
    // replace: only over the version it was decided on.
    const filter: Document = { _id: id };
    if (revision !== undefined) filter[REVISION_FIELD] = revision;
    document[REVISION_FIELD] = (revision ?? 0) + 1;
    const result = await this.collection.replaceOne(filter as Filter<StoredDocument>, document as StoredDocument);
    if (result.matchedCount === 0) throw new StaleWriteError(key, intent?.precondition, false);
    delete document[KEY_ORDER_FIELD];
    return this.entryOf(document);
  }

  /**
   * Replace (or create) whatever version is stored, with the next revision: the stored `_rev`
   * is read and the replace is conditional on it, again while another writer gets in between
   * (last write wins, but `_rev` only ever grows: a random one, as before, could move it back,
   * and a node holding the old value could take it for unchanged). Two round trips, for the
   * writes that name no intent (imports, tools); the API's writes have one.
   */
  private async replaceAnyVersion(key: EntryKey, id: EntryKey, document: Document): Promise<void> {
    for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
      const stored = await this.collection.findOne({ _id: id } as Filter<StoredDocument>, { projection: { [REVISION_FIELD]: 1 }, maxTimeMS: this.maxTimeMS });
      if (stored === null) {
        document[REVISION_FIELD] = 1;
        try {
          await this.collection.insertOne(document as StoredDocument);
          return;
        } catch (error) {
          // Created by another writer in between: replace that one.
          if (!isDuplicateKey(error) || !String((error as Error).message).includes('_id_')) throw error;
          continue;
        }
      }
      const revision = typeof stored[REVISION_FIELD] === 'number' ? (stored[REVISION_FIELD] as number) : null;
      document[REVISION_FIELD] = (revision ?? 0) + 1;
      const result = await this.collection.replaceOne({ _id: id, [REVISION_FIELD]: revision } as Filter<StoredDocument>, document as StoredDocument);
      if (result.matchedCount > 0) return;
    }
    throw new StaleWriteError(key, false, false);
  }

  async delete(key: EntryKey, intent?: WriteIntent): Promise<boolean> {
    const id = typedKey(key, this.kind);
    return this.lock.run(keyOrder(id), () =>
      this.run(async () => {
        const unexpect = this.remote.expect(id, null);
        let deleted = false;
        try {
          deleted = await this.remove(key, id, intent);
          return deleted;
        } catch (error) {
          this.forgetIfAmbiguous(id, error);
          throw error;
        } finally {
          if (!deleted) unexpect();
        }
      }),
    );
  }

  /**
   * The revision a write decided on `previous` applies to: the one served with exactly that
   * content, else the stored one if the stored entry still holds exactly `previous` (one read;
   * a copy of a served entry, or one this node forgot), `changed` when it no longer does,
   * `missing` when it is gone. Undefined only without `previous` (nothing was decided on).
   */
  private async revisionOf(id: EntryKey, previous: Entry | undefined): Promise<number | null | undefined | 'missing' | 'changed'> {
    if (previous === undefined) return undefined;
    const known = this.revisions.filterOf(id, previous);
    if (known !== undefined) return known;
    const stored = await this.collection.findOne({ _id: id }, { projection: { [KEY_ORDER_FIELD]: 0 }, maxTimeMS: this.maxTimeMS });
    if (!stored) return 'missing';
    const entry = this.entryOf(stored);
    return contentDigest(entry) === contentDigest(previous) ? this.revisions.filterOf(id, entry)! : 'changed';
  }

  /** A write that failed after it may have reached the server: re-read before the next decision. */
  private forgetIfAmbiguous(id: EntryKey, error: unknown): void {
    if (error instanceof AppError || isDuplicateKey(error) || error instanceof MongoServerSelectionError) return;
    this.revisions.forget(id);
  }

  private async remove(key: EntryKey, id: EntryKey, intent: WriteIntent | undefined): Promise<boolean> {
    const decided = await this.revisionOf(id, intent?.previous);
    if (decided === 'missing') {
      if (!intent?.precondition) return false;
      throw new StaleWriteError(key, intent.precondition, false);
    }
    if (decided === 'changed') throw new StaleWriteError(key, intent?.precondition, false);
    const revision = decided;
    if (revision === undefined) return (await this.collection.deleteOne({ _id: id })).deletedCount > 0;
    // Only the version the request was decided on (its hooks saw that one).
    const deleted = (await this.collection.deleteOne({ _id: id, [REVISION_FIELD]: revision } as Filter<StoredDocument>)).deletedCount > 0;
    if (deleted) return true;
    // Lost a race: deleted by another request already (nothing to do: false, a 404), or
    // changed since it was read (409, or 412 with If-Match). Only this case reads again.
    const still = await this.collection.findOne({ _id: id }, { projection: { _id: 1 }, maxTimeMS: this.maxTimeMS });
    if (!still && !intent?.precondition) return false;
    throw new StaleWriteError(key, intent?.precondition, false);
  }

  truncate(): Promise<void> {
    return this.run(async () => {
      await this.lock.idle();
      await this.collection.deleteMany({});
      // The key counter is kept (it only ever rises): a node that saw it higher, or keys other
      // nodes allocated meanwhile, can then never meet an allocated key again (issue #29).
      this.revisions.clear();
    });
  }

  maxIntegerKey(): Promise<number | undefined> {
    return this.run(async () => {
      const top = await this.collection.find(NUMERIC_ID, { projection: { _id: 1 }, sort: { _id: -1 }, limit: 1, maxTimeMS: this.maxTimeMS }).toArray();
      const value = top[0]?._id;
      return typeof value === 'number' ? Math.floor(value) : undefined;
    });
  }

  /**
   * Atomically reserve the next integer key: one counter document per collection,
   * `$inc` on the server, so N nodes never hand out the same key. The counter starts
   * above the largest stored integer key (seeded with `$max`, idempotent).
   */
  allocateIntegerKey(): Promise<number> {
    return this.run(async () => {
      if (!this.counterSeeded) {
        const max = await this.maxIntegerKey();
        await this.raiseCounter(max ?? 0);
        this.counterSeeded = true;
      }
      const next = await this.retryDuplicate(() =>
        this.counters.findOneAndUpdate({ _id: this.collectionName }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' }),
      );
      if (!next || typeof next.seq !== 'number') throw new Error(`the key counter of "${this.collectionName}" returned no value`);
      this.counterFloor = Math.max(this.counterFloor, next.seq);
      return next.seq;
    });
  }

  /**
   * Keep the increment counter above an explicit integer key before writing it, so an
   * allocated key never lands on an existing entry (and nothing is written if this
   * fails). Below the counter this node last saw, it is already there: no round trip.
   */
  private async raiseCounterFor(id: EntryKey): Promise<void> {
    if (typeof id === 'number' && Number.isSafeInteger(id) && this.kind !== 'string' && id > this.counterFloor) await this.raiseCounter(id);
  }

  private async raiseCounter(value: number): Promise<void> {
    await this.retryDuplicate(() => this.counters.updateOne({ _id: this.collectionName }, { $max: { seq: value } }, { upsert: true }));
    this.counterFloor = Math.max(this.counterFloor, value);
  }

  /** Concurrent upserts of the same counter may collide once; the retry then updates. */
  private async retryDuplicate<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      return operation();
    }
  }
}
