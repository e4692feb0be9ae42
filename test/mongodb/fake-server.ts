/**
 * A stand-in for a MongoDB replica set, used where no server exists (this machine). It is
 * NOT a server: it implements the collection operations the `database` source and the
 * definition store call, with the server semantics the write and watch protocols rely on
 * (docs/mongodb.md "Consistency"), so a protocol that would lose a write here fails here:
 * - every operation is applied synchronously, one at a time: document-level atomicity;
 * - filters, sorts and projections are evaluated by mingo after a BSON round trip, as
 *   the driver would send them;
 * - insertOne refuses an existing `_id` and any unique index clash (partial filters
 *   included) with a real MongoServerError 11000; replaceOne/updateOne/findOneAndUpdate
 *   apply only to a document matching the whole filter (conditional writes), with
 *   `$set`, `$unset`, `$inc`, `$max`, `$currentDate`, upserts, returnDocument;
 * - every write appends a change event (insert/update/replace/delete, then drop and
 *   invalidate on a drop) to one history with resume tokens; `watch` replays from
 *   `resumeAfter`/`startAfter`, answers 286 (history lost) for a token older than the
 *   kept history, and `fullDocument: 'updateLookup'` reads the document at delivery;
 * - injectable errors per operation (`failNext`), delays (`delay`), change-stream errors
 *   (`breakStreams`), and "no primary" (`setPrimary(false)`): every operation then waits
 *   the client's serverSelectionTimeoutMS and fails with MongoServerSelectionError, and
 *   the client reports a topology without a primary (readiness follows it).
 * The real server's semantics are checked by the same suites when MONGODB_URL is set
 * (test/mongodb/real-server.test.ts).
 */
import { EventEmitter } from 'node:events';
import { find, Query } from 'mingo';
import { BSON, MongoServerError, MongoServerSelectionError, type Document } from 'mongodb';
import type { MongoConnections } from '../../plugins/mongodb/index.js';
import type { MongoConnection } from '../../plugins/mongodb/connections.js';

/** Which backend a test ran on: every test title says it (issue #15 item 8). */
export const ON_STAND_IN = '[stand-in]';

function wire<T>(value: T): T {
  return BSON.deserialize(BSON.serialize(value as Document, { ignoreUndefined: false })) as T;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface UniqueIndex {
  name: string;
  field: string;
  partial?: Query;
}

interface ChangeEvent {
  seq: number;
  collection: string;
  operationType: 'insert' | 'update' | 'replace' | 'delete' | 'drop' | 'invalidate';
  documentKey?: { _id: unknown };
  /** Inserts and replaces carry the document written, as on the server; updates only with `updateLookup`. */
  written?: Document;
}

function token(seq: number): { _data: string } {
  return { _data: seq.toString(16).padStart(16, '0') };
}

function seqOf(resume: unknown): number | undefined {
  const data = (resume as { _data?: unknown } | undefined)?._data;
  return typeof data === 'string' ? parseInt(data, 16) : undefined;
}

interface Fault {
  op: string;
  error: () => Error;
  times: number;
}

/** Options the stand-in honours from the client (the rest are accepted and ignored). */
interface ClientOptions {
  serverSelectionTimeoutMS?: number;
}

/** One replica set's data and history, shared by every client (every node) connected to it. */
export class StandInServer {
  readonly collections = new Map<string, FakeCollection>();
  private readonly history: ChangeEvent[] = [];
  private seq = 0;
  /** Resume tokens before this sequence number are no longer in the history (286). */
  private keptFrom = 1;
  private primary = true;
  private readonly faults: Fault[] = [];
  private readonly delays = new Map<string, number>();
  private readonly holds = new Map<string, Promise<void>>();
  readonly streams = new Set<FakeChangeStream>();
  private readonly clients = new Set<StandInClient>();
  /** Operations served, by name (round trips: a test counts them). */
  readonly ops = new Map<string, number>();
  /** The `maxTimeMS` each read was sent with (undefined: none), in order. */
  readonly readLimits: Array<{ op: string; maxTimeMS: number | undefined }> = [];

  noteRead(op: string, options: { maxTimeMS?: number } | undefined): void {
    this.readLimits.push({ op, maxTimeMS: options?.maxTimeMS });
  }

  collection(name: string): FakeCollection {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new FakeCollection(name, this)));
    return c;
  }

  /** Every operation passes here first: no primary, injected faults, delays. */
  async gate(op: string, client: StandInClient | undefined): Promise<void> {
    this.ops.set(op, (this.ops.get(op) ?? 0) + 1);
    const delay = this.delays.get(op) ?? this.delays.get('*');
    if (delay) await sleep(delay);
    const held = this.holds.get(op);
    if (held) await held;
    if (!this.primary) {
      await sleep(client?.selectionTimeoutMs ?? 200);
      if (!this.primary) throw new MongoServerSelectionError('Server selection timed out: no primary available (stand-in)', {} as never);
    }
    const index = this.faults.findIndex((f) => f.op === op || f.op === '*');
    if (index >= 0) {
      const fault = this.faults[index]!;
      if (--fault.times <= 0) this.faults.splice(index, 1);
      throw fault.error();
    }
  }

  /** The next `times` operations named `op` ('*': any) fail with `error`. */
  failNext(op: string, error: () => Error, times = 1): void {
    this.faults.push({ op, error, times });
  }

  /** Every operation named `op` ('*': any) waits `ms` first (0: no delay). */
  delay(op: string, ms: number): void {
    this.delays.set(op, ms);
  }

  /**
   * Every operation named `op` waits (after being counted in `ops`) until the returned
   * function is called: a test orders two nodes' operations exactly, whatever the load.
   */
  hold(op: string): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.holds.set(op, held);
    return () => {
      if (this.holds.get(op) === held) this.holds.delete(op);
      release();
    };
  }

  /** Lose (or regain) the primary: operations fail after server selection, clients see it. */
  setPrimary(up: boolean): void {
    this.primary = up;
    for (const client of this.clients) client.topologyChanged(up);
    if (!up) for (const stream of [...this.streams]) stream.fail(new MongoServerSelectionError('no primary (stand-in)', {} as never));
  }

  hasPrimary(): boolean {
    return this.primary;
  }

  attach(client: StandInClient): void {
    this.clients.add(client);
  }

  detach(client: StandInClient): void {
    this.clients.delete(client);
  }

  record(collection: string, operationType: ChangeEvent['operationType'], id?: unknown, written?: Document): void {
    const event: ChangeEvent = { seq: ++this.seq, collection, operationType, documentKey: id === undefined ? undefined : { _id: wire({ v: id }).v } };
    if (written !== undefined) event.written = wire(written);
    this.history.push(event);
    for (const stream of [...this.streams]) stream.offer(event);
  }

  /** Change events of `collection` after `seq` (undefined: from now on). */
  eventsAfter(collection: string, seq: number): ChangeEvent[] | 'lost' {
    if (seq + 1 < this.keptFrom) return 'lost';
    return this.history.filter((e) => e.seq > seq && e.collection === collection);
  }

  currentSeq(): number {
    return this.seq;
  }

  /** Forget the history so far (an oplog that rolled over): older resume tokens get 286. */
  forgetHistory(): void {
    this.keptFrom = this.seq + 1;
    this.history.length = 0;
  }

  /** Drop a collection: its documents and indexes go, watchers get `drop` then `invalidate`. */
  drop(name: string): void {
    this.collections.delete(name);
    this.record(name, 'drop');
    this.record(name, 'invalidate');
  }

  /** Every open change stream (of `collection`, or all) fails with this server error. */
  breakStreams(code: number, collection?: string): void {
    for (const stream of [...this.streams]) {
      if (collection === undefined || stream.collectionName === collection) {
        stream.fail(new MongoServerError({ message: `change stream error ${code} (stand-in)`, code, errorLabels: code === 286 || code === 280 ? ['NonResumableChangeStreamError'] : [] }));
      }
    }
  }

  /** A client of this server (what the MONGODB_DRIVER factory hands the plugin). */
  client(options: ClientOptions = {}): StandInClient {
    return new StandInClient(this, options);
  }

  /** The driver factory to register under MONGODB_DRIVER (see standInPlugin). */
  driver(): (url: string, options: ClientOptions) => StandInClient {
    return (_url, options) => this.client(options);
  }
}

/** The MongoClient look-alike: connect/close/db/on('topologyDescriptionChanged'). */
export class StandInClient extends EventEmitter {
  readonly selectionTimeoutMs: number;
  private closed = false;

  constructor(readonly server: StandInServer, options: ClientOptions) {
    super();
    this.selectionTimeoutMs = options.serverSelectionTimeoutMS ?? 30_000;
    server.attach(this);
  }

  async connect(): Promise<this> {
    if (!this.server.hasPrimary()) {
      await sleep(this.selectionTimeoutMs);
      if (!this.server.hasPrimary()) throw new MongoServerSelectionError('Server selection timed out (stand-in)', {} as never);
    }
    this.topologyChanged(true);
    return this;
  }

  topologyChanged(primary: boolean): void {
    if (this.closed) return;
    const servers = new Map([['standin:27017', { type: primary ? 'RSPrimary' : 'RSSecondary' }]]);
    this.emit('topologyDescriptionChanged', { newDescription: { servers, hasDataBearingServers: true } });
  }

  db(): { collection(name: string): BoundCollection; command(c: Document): Promise<Document> } {
    return {
      collection: (name: string) => new BoundCollection(this.server.collection(name), this),
      command: async () => {
        await this.server.gate('command', this);
        return { ok: 1 };
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.server.detach(this);
  }
}

class FakeCursor {
  private limitTo: number | undefined;
  constructor(
    private readonly rows: () => Promise<Document[]>,
    private readonly options: { sort?: unknown; skip?: number; limit?: number; projection?: Document },
  ) {
    this.limitTo = options.limit;
  }
  limit(n: number): this {
    this.limitTo = n;
    return this;
  }
  async toArray(): Promise<Document[]> {
    const rows = await this.rows();
    let cursor = find(rows, {}, this.options.projection && Object.keys(this.options.projection).length ? this.options.projection : undefined);
    const sort = this.options.sort;
    if (sort) cursor = cursor.sort(Array.isArray(sort) ? Object.fromEntries(sort as Array<[string, number]>) : (sort as Record<string, 1 | -1>));
    if (this.options.skip) cursor = cursor.skip(this.options.skip);
    if (this.limitTo) cursor = cursor.limit(this.limitTo);
    return cursor.all().map((d) => wire(d as Document));
  }
}

type UpdateOptions = { upsert?: boolean; returnDocument?: 'before' | 'after'; projection?: Document };

/** One collection's documents and unique indexes; every method is atomic. */
export class FakeCollection {
  docs: Document[] = [];
  private readonly uniques: UniqueIndex[] = [];
  readonly indexNames = new Set<string>();
  constructor(
    readonly collectionName: string,
    readonly server: StandInServer = new StandInServer(),
  ) {}

  matching(filter: Document): Document[] {
    const query = new Query(wire(filter));
    return this.docs.filter((d) => query.test(d));
  }

  private checkUnique(candidate: Document, replacing?: Document): void {
    if (this.docs.some((d) => d !== replacing && d._id === candidate._id)) {
      throw new MongoServerError({ message: `E11000 duplicate key error collection: standin.${this.collectionName} index: _id_ dup key`, code: 11000, keyValue: { _id: candidate._id } });
    }
    for (const index of this.uniques) {
      if (index.partial && !index.partial.test(candidate)) continue;
      const clash = this.docs.find(
        (d) => d !== replacing && (!index.partial || index.partial.test(d)) && JSON.stringify(d[index.field]) === JSON.stringify(candidate[index.field]),
      );
      if (clash) {
        throw new MongoServerError({
          message: `E11000 duplicate key error collection: standin.${this.collectionName} index: ${index.name} dup key`,
          code: 11000,
          keyValue: { [index.field]: candidate[index.field] },
        });
      }
    }
  }

  createIndex(spec: Document, options: { name?: string; unique?: boolean; partialFilterExpression?: Document } = {}): string {
    const name = options.name ?? Object.keys(spec).join('_');
    this.indexNames.add(name);
    if (options.unique && !this.uniques.some((u) => u.name === name)) {
      const index = { name, field: Object.keys(spec)[0]!, partial: options.partialFilterExpression ? new Query(wire(options.partialFilterExpression)) : undefined };
      // Building a unique index over stored duplicates fails, as on the server.
      const seen = new Set<string>();
      for (const d of this.docs) {
        if ((index.partial && !index.partial.test(d)) || (!index.partial && d[index.field] === undefined)) continue;
        const value = JSON.stringify(d[index.field]);
        if (seen.has(value)) throw new MongoServerError({ message: `E11000 duplicate key error: index build ${name}`, code: 11000 });
        seen.add(value);
      }
      this.uniques.push(index);
    }
    return name;
  }

  uniqueIndexFields(): string[] {
    return this.uniques.map((u) => u.field);
  }

  insert(document: Document): void {
    const doc = wire(document);
    this.checkUnique(doc);
    this.docs.push(doc);
    this.server.record(this.collectionName, 'insert', doc._id, doc);
  }

  replace(filter: Document, replacement: Document, options: { upsert?: boolean }): { matchedCount: number; upsertedCount: number } {
    const doc = wire(replacement);
    const existing = this.matching(filter)[0];
    if (existing) {
      const next = { ...doc, _id: existing._id };
      this.checkUnique(next, existing);
      this.docs[this.docs.indexOf(existing)] = next;
      this.server.record(this.collectionName, 'replace', existing._id, next);
      return { matchedCount: 1, upsertedCount: 0 };
    }
    if (!options.upsert) return { matchedCount: 0, upsertedCount: 0 };
    if (doc._id === undefined) doc._id = (filter as { _id: unknown })._id;
    this.insert(doc);
    return { matchedCount: 0, upsertedCount: 1 };
  }

  private applyUpdate(target: Document, update: Document): void {
    for (const [field, amount] of Object.entries((update.$inc ?? {}) as Record<string, number>)) target[field] = ((target[field] as number | undefined) ?? 0) + amount;
    for (const [field, value] of Object.entries((update.$max ?? {}) as Record<string, number>)) {
      if (target[field] === undefined || (target[field] as number) < value) target[field] = value;
    }
    for (const [field, value] of Object.entries((update.$set ?? {}) as Record<string, unknown>)) {
      if (field.includes('.') || field.startsWith('$')) throw new MongoServerError({ message: `stand-in: unsupported $set path ${field}`, code: 2 });
      target[field] = value;
    }
    for (const field of Object.keys((update.$unset ?? {}) as Record<string, unknown>)) delete target[field];
    for (const field of Object.keys((update.$currentDate ?? {}) as Record<string, unknown>)) target[field] = new Date();
  }

  /** Atomic: match, copy, apply, check uniques, then swap in (a failed check changes nothing). */
  update(filter: Document, update: Document, options: UpdateOptions): { matchedCount: number; before: Document | null; after: Document | null } {
    const u = wire(update);
    const existing = this.matching(filter)[0];
    if (!existing) {
      if (!options.upsert) return { matchedCount: 0, before: null, after: null };
      const created: Document = { _id: (filter as { _id: unknown })._id };
      this.applyUpdate(created, u);
      this.insert(created);
      return { matchedCount: 0, before: null, after: this.docs[this.docs.length - 1]! };
    }
    const next = wire(existing);
    this.applyUpdate(next, u);
    this.checkUnique(next, existing);
    this.docs[this.docs.indexOf(existing)] = next;
    this.server.record(this.collectionName, 'update', existing._id);
    return { matchedCount: 1, before: existing, after: next };
  }

  remove(filter: Document, many: boolean): number {
    const gone = many ? this.matching(filter) : this.matching(filter).slice(0, 1);
    for (const d of gone) {
      this.docs.splice(this.docs.indexOf(d), 1);
      this.server.record(this.collectionName, 'delete', d._id);
    }
    return gone.length;
  }
}

function project(document: Document | null, projection: Document | undefined): Document | null {
  if (!document) return null;
  const copy = wire(document);
  if (projection) for (const [field, keep] of Object.entries(projection)) if (keep === 0) delete copy[field];
  return copy;
}

/** The Collection look-alike one client sees: every call goes through the server's gate. */
export class BoundCollection {
  constructor(
    private readonly state: FakeCollection,
    private readonly client: StandInClient | undefined,
  ) {}

  private get server(): StandInServer {
    return this.state.server;
  }

  /** The live state (a dropped collection is recreated empty on next use, as on the server). */
  private get live(): FakeCollection {
    return this.server.collection(this.state.collectionName);
  }

  get collectionName(): string {
    return this.state.collectionName;
  }

  get docs(): Document[] {
    return this.live.docs;
  }

  private gate(op: string): Promise<void> {
    return this.server.gate(op, this.client);
  }

  async createIndex(spec: Document, options: { name?: string; unique?: boolean; partialFilterExpression?: Document } = {}): Promise<string> {
    await this.gate('createIndex');
    return this.live.createIndex(spec, options);
  }

  async findOne(filter: Document, options: { projection?: Document; maxTimeMS?: number } = {}): Promise<Document | null> {
    this.server.noteRead('findOne', options);
    await this.gate('findOne');
    const rows = await new FakeCursor(async () => this.live.matching(filter), { projection: options.projection, limit: 1 }).toArray();
    return rows[0] ?? null;
  }

  find(filter: Document, options: { sort?: unknown; skip?: number; limit?: number; projection?: Document; maxTimeMS?: number } = {}): FakeCursor {
    this.server.noteRead('find', options);
    return new FakeCursor(async () => {
      await this.gate('find');
      return this.live.matching(filter);
    }, options);
  }

  async countDocuments(filter: Document, options: { maxTimeMS?: number } = {}): Promise<number> {
    this.server.noteRead('countDocuments', options);
    await this.gate('countDocuments');
    return this.live.matching(filter).length;
  }

  async insertOne(document: Document): Promise<{ insertedId: unknown }> {
    await this.gate('insertOne');
    this.live.insert(document);
    return { insertedId: document._id };
  }

  async replaceOne(filter: Document, replacement: Document, options: { upsert?: boolean } = {}): Promise<{ matchedCount: number; upsertedCount: number }> {
    await this.gate('replaceOne');
    return this.live.replace(filter, replacement, options);
  }

  async updateOne(filter: Document, update: Document, options: UpdateOptions = {}): Promise<{ matchedCount: number }> {
    await this.gate('updateOne');
    return { matchedCount: this.live.update(filter, update, options).matchedCount };
  }

  async findOneAndUpdate(filter: Document, update: Document, options: UpdateOptions = {}): Promise<Document | null> {
    await this.gate('findOneAndUpdate');
    const result = this.live.update(filter, update, options);
    return project(options.returnDocument === 'after' ? result.after : result.before, options.projection);
  }

  async deleteOne(filter: Document): Promise<{ deletedCount: number }> {
    await this.gate('deleteOne');
    return { deletedCount: this.live.remove(filter, false) };
  }

  async deleteMany(filter: Document): Promise<{ deletedCount: number }> {
    await this.gate('deleteMany');
    return { deletedCount: this.live.remove(filter, true) };
  }

  async drop(): Promise<boolean> {
    await this.gate('drop');
    this.server.drop(this.state.collectionName);
    return true;
  }

  watch(_pipeline: Document[] = [], options: { fullDocument?: string; resumeAfter?: unknown; startAfter?: unknown } = {}): FakeChangeStream {
    return new FakeChangeStream(this.server, this.state.collectionName, options, this.client);
  }
}

/**
 * A change stream: events after its start (or its resume token), delivered in order and
 * asynchronously; `error` then closed on a non-resumable error, on a history that no
 * longer holds its token (286), or when the primary is lost; closed after `invalidate`.
 */
export class FakeChangeStream extends EventEmitter {
  private last: number;
  closed = false;
  private readonly queue: ChangeEvent[] = [];
  private pumping = false;
  /** Iterator mode (the change follower's `tryNext`): delivered changes and the failure wait here. */
  private readonly pulled: Document[] = [];
  private failure: Error | undefined;
  private initialized = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly server: StandInServer,
    readonly collectionName: string,
    private readonly options: { fullDocument?: string; resumeAfter?: unknown; startAfter?: unknown },
    client: StandInClient | undefined,
  ) {
    super();
    const from = seqOf(options.resumeAfter ?? options.startAfter);
    this.last = from ?? server.currentSeq();
    server.streams.add(this);
    setImmediate(() => {
      if (this.closed) return;
      if (!server.hasPrimary()) return this.fail(new MongoServerSelectionError('no primary (stand-in)', {} as never));
      void server.gate('watch', client).then(
        () => {
          if (this.closed) return;
          const replay = server.eventsAfter(collectionName, this.last);
          if (replay === 'lost') {
            this.fail(new MongoServerError({ message: 'Resume of change stream was not possible, as the resume point may no longer be in the oplog (stand-in)', code: 286, errorLabels: ['NonResumableChangeStreamError'] }));
            return;
          }
          for (const event of replay) this.offer(event);
          this.initialized = true;
          this.wake?.();
          // As the driver does once the server answered the aggregate (postBatchResumeToken).
          this.emit('resumeTokenChanged', token(this.last));
        },
        (error: Error) => this.fail(error),
      );
    });
  }

  get resumeToken(): unknown {
    return token(this.last);
  }

  offer(event: ChangeEvent): void {
    if (this.closed || event.collection !== this.collectionName || event.seq <= this.last || this.queue.some((e) => e.seq === event.seq)) return;
    this.queue.push(event);
    this.queue.sort((a, b) => a.seq - b.seq);
    if (!this.pumping) {
      this.pumping = true;
      setImmediate(() => this.pump());
    }
  }

  private pump(): void {
    this.pumping = false;
    while (!this.closed && this.queue.length > 0) {
      const event = this.queue.shift()!;
      this.last = event.seq;
      const change: Document = { _id: token(event.seq), operationType: event.operationType, ns: { db: 'standin', coll: event.collection } };
      if (event.documentKey) change.documentKey = event.documentKey;
      if (event.written !== undefined) {
        // The server sends an insert's or a replace's document with the event, lookup or not.
        change.fullDocument = wire(event.written);
      } else if (this.options.fullDocument === 'updateLookup' && event.documentKey && event.operationType === 'update') {
        // An update's document is read at delivery: later writes show (null once deleted).
        const current = this.server.collections.get(event.collection)?.matching({ _id: event.documentKey._id })[0];
        change.fullDocument = current ? wire(current) : null;
      }
      this.emit('change', change);
      this.pulled.push(change);
      this.wake?.();
      if (event.operationType === 'invalidate') void this.close();
    }
  }

  /**
   * The driver's iterator read: the next change, or null after an idle wait (an empty getMore
   * batch); a failure is thrown once (the driver throws what it cannot resume from).
   */
  async tryNext(): Promise<Document | null> {
    for (let waited = false; ; waited = true) {
      if (this.pulled.length > 0) return this.pulled.shift()!;
      if (this.failure) {
        const failure = this.failure;
        this.failure = undefined;
        throw failure;
      }
      if (this.closed || (waited && this.initialized)) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.server.streams.delete(this);
    this.failure = error;
    this.wake?.();
    if (this.listenerCount('error') > 0) this.emit('error', error);
    this.emit('close');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.server.streams.delete(this);
    this.wake?.();
    this.emit('close');
  }
}

/**
 * A MongoConnections look-alike whose one connection is always up and served by the
 * stand-in (for the Source-level suites; whole apps use standInPlugin instead).
 */
export function fakeConnections(server = new StandInServer()): { connections: MongoConnections; collections: Map<string, FakeCollection>; server: StandInServer } {
  const client = server.client({ serverSelectionTimeoutMS: 200 });
  const db = client.db();
  const connection = {
    name: 'fake',
    database: 'fake',
    db,
    acquire() {
      return this;
    },
    release: async () => undefined,
    whenConnected: async () => undefined,
    isReady: () => server.hasPrimary(),
  };
  const connections = { get: () => connection as unknown as MongoConnection };
  return { connections: connections as unknown as MongoConnections, collections: server.collections, server };
}
