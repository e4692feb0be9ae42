import type { CacheStore, Entry, EntryKey, ExternalChange, Source, SourceCapabilities, SourcePage, SourceQuery, WhereClause, WriteIntent } from '../contracts.js';
import { NOT_AT_HAND } from '../contracts.js';

/**
 * `config.cache`: query results (query, count, paginate) of one stream kept in a
 * cache store, flushed by any write to the stream. Key lookups are not cached (the
 * sources answer them in O(1) already). A result computed while a write was in flight
 * is not stored, so the cache never keeps a result older than the last write.
 */
export class CachedSource implements Source {
  private generation = 0;
  private writing = 0;
  /** False while a shared store's changes cannot be followed (see Source.watchStore). */
  private following: boolean;
  /** Present exactly when the wrapped source has it (callers fall back otherwise). */
  readonly maxIntegerKey?: () => Promise<number | undefined>;
  /** Forwarded too: without it a cached MongoDB stream would fall back to a per-node max + 1. */
  readonly allocateIntegerKey?: () => Promise<number>;

  constructor(
    private readonly inner: Source,
    private readonly store: CacheStore,
    private readonly ttl: number | undefined,
  ) {
    // Until a shared store says its changes are followed, nothing is cached.
    this.following = inner.watchStore === undefined;
    if (inner.maxIntegerKey) this.maxIntegerKey = () => inner.maxIntegerKey!();
    if (inner.allocateIntegerKey) this.allocateIntegerKey = () => inner.allocateIntegerKey!();
    if (inner.refresh) this.refresh = (key) => inner.refresh!(key);
    if (inner.watchStore) {
      // A store other processes write (MongoDB): their writes drop cached results too, and
      // while they cannot be followed nothing is served from (or kept in) the cache.
      inner.watchStore((event) => {
        if (event === 'unreliable') this.following = false;
        if (event === 'reliable') this.following = true;
        this.generation++;
        this.store.clear();
      });
    }
    if (inner.onExternalChange) {
      // An edit on disk is a write too: cached results computed before it are dropped
      // (subscribed first, so the cache is clear before anyone else hears of the change).
      inner.onExternalChange(() => {
        this.generation++;
        this.store.clear();
      });
      this.onExternalChange = (listener) => inner.onExternalChange!(listener);
    }
  }

  /** Forwarded: a cached file stream still catches up with disk edits before writes. */
  readonly refresh?: (key?: EntryKey) => Promise<void>;
  readonly onExternalChange?: (listener: (changes: ExternalChange[]) => void) => () => void;

  get type(): string {
    return this.inner.type;
  }

  get capabilities(): SourceCapabilities {
    return this.inner.capabilities;
  }

  /** The wrapped source. */
  get source(): Source {
    return this.inner;
  }

  open(): Promise<void> {
    return this.inner.open();
  }

  async close(): Promise<void> {
    this.store.clear();
    await this.inner.close();
  }

  healthy(): Promise<boolean> {
    return this.inner.healthy();
  }

  get(key: EntryKey): Promise<Entry | undefined> {
    return this.inner.get(key);
  }

  peek(key: EntryKey): Entry | undefined | typeof NOT_AT_HAND {
    return this.inner.peek === undefined ? NOT_AT_HAND : this.inner.peek(key);
  }

  getMany(keys: EntryKey[]): Promise<Entry[]> {
    return this.inner.getMany(keys);
  }

  query(query: SourceQuery): Promise<Entry[]> {
    return this.cached(`q:${JSON.stringify(query)}`, () => this.inner.query(query));
  }

  count(where: WhereClause[]): Promise<number> {
    return this.cached(`c:${JSON.stringify(where)}`, () => this.inner.count(where));
  }

  paginate(query: SourceQuery): Promise<SourcePage> {
    return this.cached(`p:${JSON.stringify(query)}`, () => this.inner.paginate(query));
  }

  put(key: EntryKey, entry: Entry, intent?: WriteIntent): Promise<Entry | void> {
    return this.writeThrough(() => this.inner.put(key, entry, intent));
  }

  delete(key: EntryKey, intent?: WriteIntent): Promise<boolean> {
    return this.writeThrough(() => this.inner.delete(key, intent));
  }

  truncate(): Promise<void> {
    return this.writeThrough(() => this.inner.truncate());
  }


  async drain(): Promise<void> {
    await this.inner.drain?.();
  }

  private async cached<T>(key: string, compute: () => Promise<T>): Promise<T> {
    if (!this.following) return compute();
    const hit = this.store.get(key);
    if (hit !== undefined) return hit as T;
    const generation = this.generation;
    const value = await compute();
    if (this.writing === 0 && generation === this.generation) this.store.set(key, value, this.ttl);
    return value;
  }

  private async writeThrough<T>(write: () => Promise<T>): Promise<T> {
    this.writing++;
    this.generation++;
    try {
      return await write();
    } finally {
      this.writing--;
      this.generation++;
      this.store.clear();
    }
  }
}
