import type { Collection, Document, Filter } from 'mongodb';
import { KeyedLock, type Logger } from '../../kernel/index.js';
import { SourceClosedError } from '../sources/index.js';
import type { Entry, EntryKey, ExternalChange, Source, SourceCapabilities, SourceContext, SourcePage, SourceQuery, WhereClause } from '../sources/index.js';
import type { StreamDefinition } from '../streams/index.js';
import { COUNTERS_COLLECTION, requireCollectionName } from './collection-name.js';
import type { MongoConnection, MongoConnections } from './connections.js';
import { buildFilter, buildSort } from './criteria.js';
import { fromDocument, KEY_ORDER_FIELD, keyKind, keyOrder, toDocument, toId, type KeyKind } from './documents.js';
import { EntryWatch } from './entry-watch.js';
import { isDuplicateKey, mapMongoError } from './errors.js';
import { ensureIndexes } from './indexes.js';

/** Longest a list query may run on the server (see `query`). */
export const QUERY_TIME_LIMIT_MS = 5000;

export interface MongoSourceOptions {
  /** How long a request waits for a connection that is not up yet before a 503. */
  connectWaitMs: number;
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
  readonly capabilities: SourceCapabilities = { inMemory: false, persistent: true };
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
  private closed = false;
  private counterSeeded = false;
  /** Changes made by other nodes, from a change stream (see onExternalChange). */
  private readonly watch: EntryWatch;

  constructor(context: SourceContext, connections: MongoConnections, private readonly options: MongoSourceOptions) {
    this.definition = context.definition;
    this.keyName = context.definition.config.key_name;
    this.kind = keyKind(context.definition);
    const source = context.definition.config.source;
    this.collectionName = requireCollectionName(source.table ?? context.definition.id, context.definition.file ?? `stream ${context.definition.id}`);
    this.connection = connections.get(typeof source.connection === 'string' ? source.connection : 'default').acquire();
    this.logger = context.logger.child({ collection: this.collectionName });
    this.watch = new EntryWatch(this.keyName, this.logger);
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
      try {
        await ensureIndexes(this.collection, this.definition, this.logger);
      } catch (error) {
        throw mapMongoError(error, this.connection.name, this.keyName);
      }
      this.opened = true;
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.lock.idle();
    this.closed = true;
    await this.watch.close();
    await this.connection.release();
  }

  /**
   * Entries changed by other nodes sharing the collection (a MongoDB change stream, once the
   * connection is up), so they reach this node's change feed; this node's own writes are not
   * announced again. See EntryWatch.
   */
  onExternalChange(listener: (changes: ExternalChange[]) => void): () => void {
    return this.watch.listen(listener, async () => {
      await this.connection.whenConnected(2 ** 31 - 1);
      return this.collection as unknown as Collection<Document>;
    });
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
    const id = toId(key, this.kind);
    return this.run(async () => {
      const document = await this.collection.findOne({ _id: id }, { projection: { [KEY_ORDER_FIELD]: 0 } });
      return document ? fromDocument(document, this.keyName) : undefined;
    });
  }

  async getMany(keys: EntryKey[]): Promise<Entry[]> {
    const ids: EntryKey[] = [];
    const seen = new Set<string>();
    for (const key of keys) {
      let id: EntryKey;
      try {
        id = toId(key, this.kind);
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
      const documents = await this.collection.find({ _id: { $in: ids } }, { projection: this.listProjection }).toArray();
      return documents.map((d) => fromDocument(d, this.keyName));
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
      // the server: past QUERY_TIME_LIMIT_MS the server aborts it and the client gets a 503.
      const cursor = this.collection.find(filter, { projection: this.listProjection, sort, skip, maxTimeMS: QUERY_TIME_LIMIT_MS });
      if (limit !== undefined) cursor.limit(limit);
      const documents = await cursor.toArray();
      return documents.map((d) => fromDocument(d, this.keyName));
    });
  }

  async count(where: WhereClause[]): Promise<number> {
    const filter = buildFilter(where, this.keyName) as Filter<StoredDocument>;
    return this.run(() => this.collection.countDocuments(filter, { maxTimeMS: QUERY_TIME_LIMIT_MS }));
  }

  async paginate(query: SourceQuery): Promise<SourcePage> {
    const [entries, total] = await Promise.all([this.query(query), this.count(query.where)]);
    return { entries, total };
  }

  async put(key: EntryKey, entry: Entry): Promise<void> {
    const id = toId(key, this.kind);
    const document = toDocument(entry, this.keyName, id);
    return this.lock.run(keyOrder(id), () =>
      this.run(async () => {
        // Keep the increment counter above explicit integer keys before writing, so an
        // allocated key never lands on an existing entry (and nothing is written if this fails).
        if (typeof id === 'number' && Number.isSafeInteger(id) && this.kind !== 'string') {
          await this.raiseCounter(id);
        }
        const unexpect = this.watch.expect(id, document);
        try {
          await this.collection.replaceOne({ _id: id }, document, { upsert: true });
        } catch (error) {
          // Two upserts of one new `_id` racing (two nodes): the loser retries as a replace.
          if (!isDuplicateKey(error) || !String(error.message).includes('_id_')) {
            unexpect();
            throw error;
          }
          await this.collection.replaceOne({ _id: id }, document, { upsert: true }).catch((again: unknown) => {
            unexpect();
            throw again;
          });
        }
      }),
    );
  }

  async delete(key: EntryKey): Promise<boolean> {
    const id = toId(key, this.kind);
    return this.lock.run(keyOrder(id), () =>
      this.run(async () => {
        const unexpect = this.watch.expect(id, null);
        let deleted = false;
        try {
          deleted = (await this.collection.deleteOne({ _id: id })).deletedCount > 0;
        } finally {
          if (!deleted) unexpect();
        }
        return deleted;
      }),
    );
  }

  truncate(): Promise<void> {
    return this.run(async () => {
      await this.lock.idle();
      await this.collection.deleteMany({});
      await this.counters.deleteOne({ _id: this.collectionName });
      this.counterSeeded = false;
    });
  }

  maxIntegerKey(): Promise<number | undefined> {
    return this.run(async () => {
      const top = await this.collection.find(NUMERIC_ID, { projection: { _id: 1 }, sort: { _id: -1 }, limit: 1 }).toArray();
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
      return next.seq;
    });
  }

  private async raiseCounter(value: number): Promise<void> {
    await this.retryDuplicate(() => this.counters.updateOne({ _id: this.collectionName }, { $max: { seq: value } }, { upsert: true }));
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
