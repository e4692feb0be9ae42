import { randomUUID } from 'node:crypto';
import type { ChangeStream, ChangeStreamDocument, Collection } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import type { DefinitionStore } from '../streams/index.js';
import type { MongoConnection } from './connections.js';

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
}

/**
 * The meta-stream in MongoDB (`streams.source: {type: "database"}`): N nodes share one
 * set of definitions. A node learns about changes made by another node through a change
 * stream (replica sets and sharded clusters), else by polling the versions every
 * `streams.poll_interval_ms`. Its own writes are not echoed back (versions match).
 */
export class MongoDefinitionStore implements DefinitionStore {
  /** Version of every definition this node knows, to tell real changes from echoes. */
  private readonly known = new Map<string, string>();
  private onChange: ((id: string) => void) | undefined;
  private changeStream: ChangeStream<DefinitionDocument> | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;
  /** Boot found the database unreachable: everything is announced once it is back. */
  private missedBoot = false;

  constructor(
    private readonly connection: MongoConnection,
    private readonly options: DefinitionStoreOptions,
    private readonly logger: Logger,
  ) {
    connection.acquire();
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

  async loadAll(): Promise<Array<{ raw: Record<string, unknown>; id?: string }>> {
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
    const documents = await this.collection.find({}).toArray();
    const items: Array<{ raw: Record<string, unknown>; id: string }> = [];
    for (const document of documents) {
      const raw = this.parse(document);
      if (!raw) continue;
      this.known.set(document._id, document.version);
      items.push({ raw, id: document._id });
    }
    return items;
  }

  async save(id: string, raw: Record<string, unknown>): Promise<undefined> {
    const version = randomUUID();
    const body = { ...raw, id };
    await this.collection.updateOne(
      { _id: id },
      { $set: { json: JSON.stringify(body), version }, $currentDate: { updated_at: true } },
      { upsert: true },
    );
    this.known.set(id, version);
    return undefined;
  }

  async remove(id: string): Promise<boolean> {
    this.known.delete(id);
    const result = await this.collection.deleteOne({ _id: id });
    return result.deletedCount > 0;
  }

  async watch(onChange: (id: string) => void): Promise<void> {
    this.onChange = onChange;
    // Never block boot: watching starts once the connection is up.
    void this.connection
      .whenConnected(2 ** 31 - 1)
      .then(() => this.startWatching())
      .catch((error: unknown) => {
        if (!this.closed) this.logger.error({ err: error }, 'watching stream definitions failed');
      });
  }

  private async startWatching(): Promise<void> {
    if (this.closed) return;
    try {
      const stream = this.collection.watch<DefinitionDocument, ChangeStreamDocument<DefinitionDocument>>([], { fullDocument: 'updateLookup' });
      stream.on('change', (change) => this.onStreamChange(change));
      stream.on('error', (error: Error) => {
        this.logger.info(
          { err: { message: error.message }, intervalMs: this.options.pollIntervalMs },
          'change streams unavailable for stream definitions (a standalone server?): polling instead',
        );
        void stream.close().catch(() => undefined);
        if (this.changeStream === stream) this.changeStream = undefined;
        this.startPolling();
      });
      this.changeStream = stream;
    } catch (error) {
      this.logger.info({ err: { message: (error as Error).message } }, 'change streams unavailable: polling stream definitions');
      this.startPolling();
    }
    // Changes made between loadAll and the first event (or while unreachable at boot).
    await this.poll();
  }

  private onStreamChange(change: ChangeStreamDocument<DefinitionDocument>): void {
    switch (change.operationType) {
      case 'insert':
      case 'update':
      case 'replace': {
        const id = change.documentKey._id;
        const version = change.fullDocument?.version;
        if (version !== undefined && this.known.get(id) === version) return; // our own write
        if (version !== undefined) this.known.set(id, version);
        else this.known.delete(id);
        this.onChange?.(id);
        return;
      }
      case 'delete': {
        const id = change.documentKey._id;
        if (!this.known.has(id)) return; // our own delete
        this.known.delete(id);
        this.onChange?.(id);
        return;
      }
      default:
        // drop, rename, invalidate: compare everything.
        void this.poll();
    }
  }

  private startPolling(): void {
    if (this.pollTimer || this.closed) return;
    this.pollTimer = setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.pollTimer.unref();
  }

  /** Compare stored versions with the known ones and announce every difference. */
  async poll(): Promise<void> {
    if (this.polling || this.closed || !this.connection.isReady()) return;
    this.polling = true;
    try {
      const stored = await this.collection.find({}).toArray();
      const seen = new Set<string>();
      const changed = new Map<string, string | undefined>();
      for (const document of stored) {
        seen.add(document._id);
        if (this.known.get(document._id) !== document.version) {
          this.known.set(document._id, document.version);
          changed.set(document._id, this.parentOf(document));
        }
      }
      for (const id of [...this.known.keys()]) {
        if (!seen.has(id)) {
          this.known.delete(id);
          changed.set(id, undefined);
        }
      }
      this.missedBoot = false;
      for (const id of parentsFirst(changed)) this.onChange?.(id);
    } catch (error) {
      this.logger.warn({ err: { message: (error as Error).message } }, 'polling stream definitions failed; retrying at the next interval');
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
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await this.changeStream?.close().catch(() => undefined);
    this.changeStream = undefined;
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
