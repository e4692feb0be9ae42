import { randomUUID } from 'node:crypto';
import { MongoServerSelectionError, type ChangeStreamDocument, type Collection } from 'mongodb';
import { AppError, backoffDelay, type Logger } from '../../kernel/index.js';
import type { DefinitionStore } from '../streams/index.js';
import type { MongoConnection } from './connections.js';
import { ChangeFollower } from './change-follower.js';
import { codeOf, isDuplicateKey, isTransient, mapMongoError } from './errors.js';

/**
 * A definition as stored: the raw JSON as text (definitions carry keys such as
 * `$schema` that MongoDB would treat as operators), and a version that changes on every
 * save so nodes can tell which definitions changed.
 */
interface DefinitionDocument {
  _id: string;
  json: string;
  version: string;
  updated_at: Date;
}

export interface DefinitionStoreOptions {
  collection: string;
  /** Polling interval when change streams are unavailable (standalone server). */
  pollIntervalMs: number;
  /** How long boot waits for the database before starting with no definitions. */
  connectWaitMs: number;
  /** First delay before re-opening a failed change stream or retrying a failed reload (doubles). */
  retryInitialMs?: number;
  /** Upper bound of that backoff; also how often a polling node tries the change stream again. */
  retryMaxMs?: number;
}

/** Longest a read of the definitions may run on the server (a few small documents). */
const READ_TIME_LIMIT_MS = 10_000;
/** A failed reload of one definition is retried this many times before it waits for the next change. */
const RELOAD_ATTEMPTS = 6;

type Item = { raw: Record<string, unknown>; id: string };

/**
 * The meta-stream in MongoDB (`streams.source: {type: "database"}`): N nodes share one
 * set of definitions (docs/mongodb.md "Shared stream definitions").
 * - Writes are decided in the database: a create is insert-only, an update applies only
 *   over the version this node serves (`{_id, version}`); otherwise 409.
 * - A node follows the others through a change stream with its resume token: an error
 *   re-opens it with backoff from that token; an invalidate, a drop or a lost history
 *   (286, 280) does a full comparison and watches afresh. Without change streams
 *   (standalone server) it polls, and tries the change stream again every `retryMaxMs`.
 * - `known` holds the version of each definition the registry serves (set by `load`,
 *   `loadAll` and `save`, never by an event), so a change whose reload failed is not
 *   mistaken for an echo: the reload is retried with backoff, and the next comparison
 *   announces it again.
 */
export class MongoDefinitionStore implements DefinitionStore {
  private readonly known = new Map<string, string>();
  /**
   * Versions this node is writing or wrote: their change events are echoes even when one
   * arrives before the write's own reply (another connection). Bounded (oldest dropped).
   */
  private readonly ownVersions = new Set<string>();
  /**
   * Definitions whose last write from this node may or may not be applied (a network error
   * or a write concern timeout after the server had it): re-read before the next write.
   */
  private readonly unsure = new Map<string, Promise<void>>();
  private onChange: ((id: string) => Promise<void> | void) | undefined;
  private follower: ChangeFollower<DefinitionDocument> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private streamFailures = 0;
  private polling = false;
  private pollAgain = false;
  private closed = false;
  /** Boot found the database unreachable: everything is announced once it is back. */
  private missedBoot = false;
  /** How the node follows the others now (for logs and tests). */
  mode: 'idle' | 'stream' | 'polling' = 'idle';
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;

  constructor(
    private readonly connection: MongoConnection,
    private readonly options: DefinitionStoreOptions,
    private readonly logger: Logger,
  ) {
    connection.acquire();
    this.retryInitialMs = options.retryInitialMs ?? 200;
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
  }

  private get collection(): Collection<DefinitionDocument> {
    return this.connection.db.collection<DefinitionDocument>(this.options.collection);
  }

  private parse(document: DefinitionDocument): Record<string, unknown> | undefined {
    try {
      const raw: unknown = JSON.parse(document.json);
      if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) return { ...(raw as Record<string, unknown>), id: document._id };
    } catch {
      // fall through
    }
    this.logger.error({ collection: this.options.collection, id: document._id }, 'stored stream definition is not a JSON object; skipped');
    return undefined;
  }

  async loadAll(): Promise<Item[]> {
    try {
      await this.connection.whenConnected(this.options.connectWaitMs);
    } catch {
      if (!this.missedBoot && this.known.size === 0) {
        // Boot goes on with no database-stored definitions; /readyz stays false until the
        // connection is up, then the watcher announces every definition.
        this.missedBoot = true;
        this.logger.error(
          { collection: this.options.collection, connection: this.connection.name },
          'stream definitions are stored in MongoDB, which is unreachable: starting with none, they load when the connection comes up',
        );
        return [];
      }
      throw new Error(`stream definitions cannot be read: the database connection "${this.connection.name}" is unavailable`);
    }
    const documents = await this.collection.find({}, { maxTimeMS: READ_TIME_LIMIT_MS }).toArray();
    const items: Item[] = [];
    for (const document of documents) {
      const raw = this.parse(document);
      if (!raw) continue;
      this.known.set(document._id, document.version);
      items.push({ raw, id: document._id });
    }
    return items;
  }

  /** One definition as stored now; from here on the registry serves this version. */
  async load(id: string): Promise<Item | undefined> {
    const document = await this.collection.findOne({ _id: id }, { maxTimeMS: READ_TIME_LIMIT_MS });
    if (!document) {
      this.known.delete(id);
      return undefined;
    }
    const raw = this.parse(document);
    if (!raw) return undefined;
    this.known.set(id, document.version);
    return { raw, id };
  }

  /**
   * Decided in the database: a definition this node does not serve is inserted (another
   * node's create of the same id wins: 409), one it serves is replaced only over the
   * version it serves (another node's change in between: 409, the watcher brings it).
   */
  async save(id: string, raw: Record<string, unknown>): Promise<undefined> {
    await this.unsure.get(id);
    const version = randomUUID();
    const json = JSON.stringify({ ...raw, id });
    const served = this.known.get(id);
    this.ownVersions.add(version);
    if (this.ownVersions.size > 1000) this.ownVersions.delete(this.ownVersions.values().next().value!);
    try {
      if (served === undefined) {
        await this.collection.insertOne({ _id: id, json, version, updated_at: new Date() });
      } else {
        const result = await this.collection.updateOne({ _id: id, version: served }, { $set: { json, version }, $currentDate: { updated_at: true } });
        if (result.matchedCount === 0) {
          throw new AppError(409, `Stream [${id}] was changed or deleted on another node meanwhile; read it again and retry.`);
        }
      }
    } catch (error) {
      if (isDuplicateKey(error)) throw new AppError(409, `Stream [${id}] was created on another node meanwhile; read it and retry.`);
      if (!(error instanceof AppError) && !(error instanceof MongoServerSelectionError)) this.ambiguous(id, version);
      throw mapMongoError(error, this.connection.name, 'id');
    }
    this.known.set(id, version);
    return undefined;
  }

  /**
   * A write that failed after it was sent may be applied all the same (issue #29 item 3). Its
   * version is no longer taken for an echo, and the definition is read again: the registry is
   * told (it reloads what is stored, so this node serves the stored version, whichever it is)
   * and the next write of it waits for that read, so it is decided over the stored version.
   */
  private ambiguous(id: string, version: string): void {
    this.ownVersions.delete(version);
    const reread = (async () => {
      for (let attempt = 1; !this.closed; attempt++) {
        try {
          const document = await this.collection.findOne({ _id: id }, { projection: { version: 1 }, maxTimeMS: READ_TIME_LIMIT_MS });
          if (!document) this.known.delete(id);
          else if (document.version !== this.known.get(id)) {
            this.known.delete(id); // not what the registry serves: the announcement below reloads it
            await this.announce(id);
          }
          return;
        } catch {
          if (attempt >= RELOAD_ATTEMPTS) return;
          await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, this.retryInitialMs, this.retryMaxMs)).unref());
        }
      }
    })().finally(() => {
      if (this.unsure.get(id) === reread) this.unsure.delete(id);
    });
    this.unsure.set(id, reread);
  }

  async remove(id: string): Promise<boolean> {
    this.known.delete(id);
    try {
      const result = await this.collection.deleteOne({ _id: id });
      return result.deletedCount > 0;
    } catch (error) {
      throw mapMongoError(error, this.connection.name, 'id');
    }
  }

  async watch(onChange: (id: string) => Promise<void> | void): Promise<void> {
    this.onChange = onChange;
    // Never block boot: watching starts once the connection is up.
    void this.connection
      .whenConnected(2 ** 31 - 1)
      .then(() => this.startWatching())
      .catch((error: unknown) => {
        if (!this.closed) this.logger.error({ err: error }, 'watching stream definitions failed');
      });
  }

  /** Follow the others through the one change follower (change-follower.ts). */
  private startWatching(): void {
    if (this.closed) return;
    this.follower ??= new ChangeFollower<DefinitionDocument>(
      () => this.collection,
      () => this.connection.db,
      {
        opened: (resumed) => {
          this.streamFailures = 0;
          if (this.mode === 'polling') this.logger.info({ collection: this.options.collection }, 'change stream available again for stream definitions: polling stopped');
          this.stopPolling();
          this.mode = 'stream';
          // Changes made before the stream started (boot, an outage with no resume point,
          // after a dropped token): compare everything once.
          if (!resumed) void this.poll();
        },
        change: (change) => this.onStreamChange(change),
        interrupted: (error, retryInMs) => {
          // Network, no primary, failover, or a stream that ended: it re-opens from the kept
          // resume point; poll meanwhile if it keeps failing, so a long outage hides nothing.
          this.streamFailures += 1;
          if (error) {
            this.logger.warn(
              { err: { message: error.message, code: codeOf(error) }, retryInMs, transient: isTransient(error) },
              'the change stream of stream definitions failed; resuming from its token',
            );
          }
          if (this.streamFailures > 1) {
            this.mode = 'polling';
            this.startPolling();
          }
        },
        lost: (reason, error) => {
          if (reason === 'unsupported') {
            // A standalone server: poll, and try the change stream again from time to time.
            if (this.mode !== 'polling') {
              this.logger.info(
                { err: { message: error?.message, code: codeOf(error) }, intervalMs: this.options.pollIntervalMs },
                'change streams unavailable for stream definitions (a standalone server?): polling instead',
              );
            }
            this.mode = 'polling';
            this.startPolling();
            return;
          }
          // Invalidated (drop, rename) or the history no longer holds the token: compare
          // everything now; the follower watches afresh.
          void this.poll();
        },
      },
      this.logger,
      { retry: { initialMs: this.retryInitialMs, maxMs: this.retryMaxMs }, watch: { fullDocument: 'updateLookup' } },
    );
    this.follower.start();
  }

  private onStreamChange(change: ChangeStreamDocument<DefinitionDocument>): void {
    switch (change.operationType) {
      case 'insert':
      case 'update':
      case 'replace': {
        const id = change.documentKey._id;
        const version = change.fullDocument?.version;
        if (version !== undefined && (this.known.get(id) === version || this.ownVersions.delete(version))) return; // our own write
        void this.announce(id);
        return;
      }
      case 'delete': {
        const id = change.documentKey._id;
        if (!this.known.has(id)) return; // our own delete
        void this.announce(id);
        return;
      }
      default:
        // drop, rename, dropDatabase, invalidate: compare everything (an invalidate
        // then ends the stream, which watches afresh).
        void this.poll();
    }
  }

  /** Tell the registry; a failed reload is retried with backoff (it may be transient). */
  private announce(id: string, attempt = 1): Promise<void> {
    if (this.closed || !this.onChange) return Promise.resolve();
    let result: Promise<void> | void;
    try {
      result = this.onChange(id);
    } catch (error) {
      result = Promise.reject(error);
    }
    return Promise.resolve(result).catch((error: unknown) => {
      if (this.closed) return;
      if (attempt >= RELOAD_ATTEMPTS) {
        this.logger.error({ id, err: { message: (error as Error).message } }, `reloading stream definition [${id}] failed ${attempt} times; it is retried at the next change or comparison`);
        return;
      }
      const delay = backoffDelay(attempt, this.retryInitialMs, this.retryMaxMs);
      setTimeout(() => void this.announce(id, attempt + 1), delay).unref();
    });
  }

  private startPolling(): void {
    if (this.pollTimer || this.closed) return;
    this.pollTimer = setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.pollTimer.unref();
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  /** Compare stored versions with the served ones and announce every difference. */
  async poll(): Promise<void> {
    if (this.closed || !this.connection.isReady()) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.pollAgain = false;
        const stored = await this.collection.find({}, { projection: { _id: 1, version: 1, json: 1 }, maxTimeMS: READ_TIME_LIMIT_MS }).toArray();
        const seen = new Set<string>();
        const changed = new Map<string, string | undefined>();
        for (const document of stored) {
          seen.add(document._id);
          if (this.known.get(document._id) !== document.version) changed.set(document._id, this.parentOf(document));
        }
        for (const id of this.known.keys()) if (!seen.has(id)) changed.set(id, undefined);
        this.missedBoot = false;
        // One at a time: a parent is served before the streams that extend it are rebuilt.
        for (const id of parentsFirst(changed)) await this.announce(id);
      } while (this.pollAgain && !this.closed);
    } catch (error) {
      this.logger.warn({ err: { message: (error as Error).message } }, 'comparing stream definitions failed; retrying at the next interval');
      this.startPolling();
    } finally {
      this.polling = false;
    }
  }

  private parentOf(document: DefinitionDocument): string | undefined {
    const raw = this.parse(document);
    return typeof raw?.extends === 'string' ? raw.extends : undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopPolling();
    await this.follower?.stop();
    await this.connection.release();
  }
}

/** Announce a parent before the streams that extend it (a child builds on its parent). */
export function parentsFirst(changed: Map<string, string | undefined>): string[] {
  const order: string[] = [];
  const done = new Set<string>();
  const visit = (id: string, depth: number): void => {
    if (done.has(id) || depth > changed.size) return;
    const parent = changed.get(id);
    if (parent !== undefined && changed.has(parent)) visit(parent, depth + 1);
    if (!done.has(id)) {
      done.add(id);
      order.push(id);
    }
  };
  for (const id of changed.keys()) visit(id, 0);
  return order;
}
