/**
 * A stand-in for a MongoDB server, used ONLY to run the shared source contract over the
 * MongoSource code when no server exists (this machine). It implements the handful of
 * collection methods the source calls, evaluates every filter, sort and projection with
 * mingo (after a BSON round trip, as the driver would send them), enforces unique
 * indexes (partial filters included) with a real MongoServerError 11000, and applies
 * `$inc`/`$max` upserts. It proves the source's own logic (key mapping, hidden key
 * order, projections, counters, error mapping); the semantics of the real server are
 * checked by the same suite when MONGODB_URL is set.
 */
import { EventEmitter } from 'node:events';
import { find, Query } from 'mingo';
import { BSON, MongoServerError, type Document } from 'mongodb';
import type { MongoConnection, MongoConnections } from '../../plugins/mongodb/index.js';

function wire<T>(value: T): T {
  return BSON.deserialize(BSON.serialize(value as Document, { ignoreUndefined: false })) as T;
}

interface UniqueIndex {
  name: string;
  field: string;
  partial?: Query;
}

function sameId(a: unknown, b: unknown): boolean {
  return a === b;
}

class FakeCursor {
  private limitTo: number | undefined;
  constructor(
    private readonly rows: () => Document[],
    private readonly options: { sort?: unknown; skip?: number; limit?: number; projection?: Document },
  ) {
    this.limitTo = options.limit;
  }
  limit(n: number): this {
    this.limitTo = n;
    return this;
  }
  async toArray(): Promise<Document[]> {
    let cursor = find(this.rows(), {}, this.options.projection && Object.keys(this.options.projection).length ? this.options.projection : undefined);
    const sort = this.options.sort;
    if (sort) cursor = cursor.sort(Array.isArray(sort) ? Object.fromEntries(sort as Array<[string, number]>) : (sort as Record<string, 1 | -1>));
    if (this.options.skip) cursor = cursor.skip(this.options.skip);
    if (this.limitTo) cursor = cursor.limit(this.limitTo);
    return cursor.all().map((d) => wire(d as Document));
  }
}

/**
 * A change stream as the driver hands it out: `change` events after each write, in write
 * order, delivered later (as from the server). No pre-images (as on a collection without
 * `changeStreamPreAndPostImages`).
 */
class FakeChangeStream extends EventEmitter {
  constructor(private readonly streams: Set<FakeChangeStream>) {
    super();
    streams.add(this);
  }
  async close(): Promise<void> {
    this.streams.delete(this);
  }
}

export class FakeCollection {
  readonly docs: Document[] = [];
  private readonly uniques: UniqueIndex[] = [];
  private readonly streams = new Set<FakeChangeStream>();
  constructor(readonly collectionName: string) {}

  watch(): FakeChangeStream {
    return new FakeChangeStream(this.streams);
  }

  /** Tell every open change stream (as a document written by this or any other node). */
  private emit(operationType: 'insert' | 'replace' | 'delete', id: unknown, fullDocument?: Document): void {
    const change = { operationType, documentKey: { _id: id }, ...(fullDocument ? { fullDocument: wire(fullDocument) } : {}) };
    for (const stream of this.streams) setImmediate(() => stream.emit('change', change));
  }

  private matching(filter: Document): Document[] {
    const query = new Query(wire(filter));
    return this.docs.filter((d) => query.test(d));
  }

  private checkUnique(candidate: Document, replacing?: Document): void {
    for (const index of this.uniques) {
      if (index.partial && !index.partial.test(candidate)) continue;
      const clash = this.docs.find(
        (d) => d !== replacing && (!index.partial || index.partial.test(d)) && JSON.stringify(d[index.field]) === JSON.stringify(candidate[index.field]),
      );
      if (clash) {
        throw new MongoServerError({
          message: `E11000 duplicate key error collection: fake.${this.collectionName} index: ${index.name} dup key`,
          code: 11000,
          keyValue: { [index.field]: candidate[index.field] },
        });
      }
    }
  }

  async createIndex(spec: Document, options: { name?: string; unique?: boolean; partialFilterExpression?: Document } = {}): Promise<string> {
    const name = options.name ?? Object.keys(spec).join('_');
    if (options.unique && !this.uniques.some((u) => u.name === name)) {
      const index = { name, field: Object.keys(spec)[0]!, partial: options.partialFilterExpression ? new Query(wire(options.partialFilterExpression)) : undefined };
      this.uniques.push(index);
    }
    return name;
  }

  async findOne(filter: Document, options: { projection?: Document } = {}): Promise<Document | null> {
    const rows = await new FakeCursor(() => this.matching(filter), { projection: options.projection, limit: 1 }).toArray();
    return rows[0] ?? null;
  }

  find(filter: Document, options: { sort?: unknown; skip?: number; limit?: number; projection?: Document } = {}): FakeCursor {
    return new FakeCursor(() => this.matching(filter), options);
  }

  async countDocuments(filter: Document): Promise<number> {
    return this.matching(filter).length;
  }

  async replaceOne(filter: Document, replacement: Document, options: { upsert?: boolean } = {}): Promise<{ matchedCount: number }> {
    const doc = wire(replacement);
    const existing = this.matching(filter)[0];
    if (existing) {
      this.checkUnique(doc, existing);
      this.docs[this.docs.indexOf(existing)] = { ...doc, _id: existing._id };
      this.emit('replace', existing._id, { ...doc, _id: existing._id });
      return { matchedCount: 1 };
    }
    if (!options.upsert) return { matchedCount: 0 };
    if (doc._id === undefined) doc._id = (filter as { _id: unknown })._id;
    if (this.docs.some((d) => sameId(d._id, doc._id))) throw new MongoServerError({ message: 'E11000 index: _id_', code: 11000, keyValue: { _id: doc._id } });
    this.checkUnique(doc);
    this.docs.push(doc);
    this.emit('insert', doc._id, doc);
    return { matchedCount: 0 };
  }

  async deleteOne(filter: Document): Promise<{ deletedCount: number }> {
    const existing = this.matching(filter)[0];
    if (!existing) return { deletedCount: 0 };
    this.docs.splice(this.docs.indexOf(existing), 1);
    this.emit('delete', existing._id);
    return { deletedCount: 1 };
  }

  async deleteMany(filter: Document): Promise<{ deletedCount: number }> {
    const gone = this.matching(filter);
    for (const d of gone) {
      this.docs.splice(this.docs.indexOf(d), 1);
      this.emit('delete', d._id);
    }
    return { deletedCount: gone.length };
  }

  private applyUpdate(target: Document, update: Document): void {
    for (const [field, amount] of Object.entries((update.$inc ?? {}) as Record<string, number>)) target[field] = ((target[field] as number | undefined) ?? 0) + amount;
    for (const [field, value] of Object.entries((update.$max ?? {}) as Record<string, number>)) {
      if (target[field] === undefined || (target[field] as number) < value) target[field] = value;
    }
    for (const [field, value] of Object.entries((update.$set ?? {}) as Record<string, unknown>)) target[field] = value;
    for (const field of Object.keys((update.$currentDate ?? {}) as Record<string, unknown>)) target[field] = new Date();
  }

  async updateOne(filter: Document, update: Document, options: { upsert?: boolean } = {}): Promise<{ matchedCount: number }> {
    return this.updateNow(filter, update, options);
  }

  /** Synchronous, so findOneAndUpdate is atomic like on the server. */
  private updateNow(filter: Document, update: Document, options: { upsert?: boolean }): { matchedCount: number } {
    let target = this.matching(filter)[0];
    if (!target) {
      if (!options.upsert) return { matchedCount: 0 };
      target = { _id: (filter as { _id: unknown })._id };
      this.docs.push(target);
    }
    this.applyUpdate(target, wire(update));
    return { matchedCount: 1 };
  }

  async findOneAndUpdate(filter: Document, update: Document, options: { upsert?: boolean } = {}): Promise<Document | null> {
    this.updateNow(filter, update, options);
    return wire(this.matching(filter)[0] ?? null) as Document | null;
  }
}

/** A MongoConnections look-alike whose one connection is always up and served by FakeCollections. */
export function fakeConnections(): { connections: MongoConnections; collections: Map<string, FakeCollection> } {
  const collections = new Map<string, FakeCollection>();
  const db = {
    collection(name: string): FakeCollection {
      let c = collections.get(name);
      if (!c) collections.set(name, (c = new FakeCollection(name)));
      return c;
    },
  };
  const connection = {
    name: 'fake',
    database: 'fake',
    db,
    acquire() {
      return this;
    },
    release: async () => undefined,
    whenConnected: async () => undefined,
    isReady: () => true,
  };
  const connections = { get: () => connection as unknown as MongoConnection };
  return { connections: connections as unknown as MongoConnections, collections };
}
