import { KeyedLock, type FileRoots, type FolderWatcher, type Logger } from '../../kernel/index.js';
import { keyNameOf, type StreamDefinition } from '../streams/index.js';
import type {
  Entry,
  EntryKey,
  EntryReviver,
  ExternalChange,
  Source,
  SourceCapabilities,
  SourcePage,
  SourceQuery,
  WhereClause,
} from './contracts.js';
import { keyId } from './criteria/values.js';
import { EntryTable } from './memory/entry-table.js';
import type { EntryStore, FileLimits, StoreFactory, StoreHost } from './memory/entry-store.js';
import { UnreadableFiles } from './memory/unreadable-files.js';
import { SourceClosedError } from './source-errors.js';
import { NOT_AT_HAND } from './contracts.js';

/** Longest stretch a load keeps the event loop before yielding (ms). */
export const LOAD_SLICE_MS = 10;
/** Streams with at least this many files report their load progress (about once a second). */
const PROGRESS_MIN = 20_000;

/** Where a load's indexing is (see `indexSlice`): the next entry, the entries kept, the last ascending key. */
interface IndexProgress {
  next: number;
  kept: number;
  ascending: number;
}

/** Let pending I/O and timers run (setImmediate: after I/O callbacks). */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A source served from memory (filebase, file, self, collection, an addon's): the whole
 * stream is loaded once, at first use, into an EntryTable (memory/entry-table.ts: the
 * criteria engine, with its indexes and caches, and the auto-index heuristic of
 * memory/auto-index.ts), which answers every read. Where the entries are kept is the
 * EntryStore it is given (memory/entry-store.ts): the source calls it to load and to make
 * each write durable, and the store reports edits made on disk through a StoreHost.
 *
 * Writes: one key at a time (a KeyedLock per key), memory updated only after the
 * store made the write durable, so a reader never sees an unacknowledged write.
 */
export class MemorySource implements Source {
  readonly type: string;
  readonly capabilities: SourceCapabilities;
  private readonly keyName: string;
  /** Where the entries are kept. */
  private readonly store: EntryStore;
  /** The criteria engine: entries by key and in key order, indexes, order and match caches. */
  private readonly table: EntryTable;
  private loading: Promise<void> | undefined;
  private loaded = false;
  private closed = false;
  /** Set when close() starts: a load in progress stops at its next slice. */
  private closing = false;
  private failure: Error | undefined;
  private readonly locks = new KeyedLock();
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** Set while a truncate runs: new writes wait for it. */
  private barrier: Promise<void> | undefined;

  /** Resolves when the source this one replaces has finished its writes. */
  private after: Promise<void> | undefined;
  private reviver: EntryReviver | undefined;
  /** Live file sync: the shared watcher (unset: files are read at load and before writes only). */
  private watcher: FolderWatcher | undefined;
  private unwatch: Array<() => void> = [];
  private readonly externalListeners = new Set<(changes: ExternalChange[]) => void>();
  /** Files holding an edit that cannot be read (the last good version is served). */
  private readonly unreadable: UnreadableFiles;
  /** The limits on the files read (`limitFiles`): no size limit and no roots until given. */
  private readonly files: FileLimits = { maxBytes: Infinity, roots: undefined };

  /** Present exactly when the store can catch up with edits made outside this server. */
  readonly refresh?: (key?: EntryKey) => Promise<void>;

  /** `store`: where the entries are kept, or what builds it given the StoreHost it reports to. */
  constructor(
    protected readonly definition: StreamDefinition,
    protected readonly logger: Logger,
    store: EntryStore | StoreFactory,
  ) {
    this.keyName = keyNameOf(definition);
    this.table = new EntryTable(definition, this.keyName, logger);
    this.unreadable = new UnreadableFiles(logger);
    this.store = typeof store === 'function' ? store(this.host()) : store;
    this.type = this.store.type;
    this.capabilities = { inMemory: true, persistent: this.store.persistent };
    const own = this.store;
    if (own.refresh) this.refresh = (key) => own.refresh!(key);
  }

  /** What the store may ask of this source (entry-store.ts); nothing else of it is the store's. */
  private host(): StoreHost {
    return {
      definition: this.definition,
      keyName: this.keyName,
      logger: this.logger,
      files: this.files,
      unreadable: this.unreadable,
      open: () => this.open(),
      nextSlice: () => this.nextSlice(),
      progress: (done, total) => this.progress(done, total),
      underKeyLock: (id, task) => this.locks.run(id, task),
      stored: (id) => this.table.get(id),
      all: () => this.table.all(),
      replace: (id, entry) => this.replaceStored(id, entry),
      announce: (changes) => this.announce(changes),
    };
  }

  /** Load only once `previous` resolved (see SourceContext.after). Returns this. */
  loadAfter(previous: Promise<void> | undefined): this {
    this.after = previous;
    return this;
  }

  /**
   * The byte budgets of the filtered-match cache (`streams.caches.match_bytes`) and of the
   * sorted-order cache (`streams.caches.orders_bytes`). Returns this.
   */
  limitCaches(budgets: { matchBytes: number; ordersBytes: number }): this {
    this.table.limitCaches(budgets);
    return this;
  }

  /** The limits on the files read (`streams.files.max_bytes`, the application's roots). Returns this. */
  limitFiles(maxBytes: number, roots: FileRoots | undefined): this {
    this.files.maxBytes = maxBytes;
    this.files.roots = roots;
    return this;
  }

  /** Cast what is read from files by the field types (see EntryReviver). Returns this. */
  reviveWith(reviver: EntryReviver): this {
    this.reviver = reviver;
    return this;
  }

  /** Follow edits on disk with this watcher (issue #14; `streams.watch`). Returns this. */
  watchWith(watcher: FolderWatcher): this {
    this.watcher = watcher;
    return this;
  }

  onExternalChange(listener: (changes: ExternalChange[]) => void): () => void {
    this.externalListeners.add(listener);
    return () => this.externalListeners.delete(listener);
  }

  /** Tell listeners about entries changed on disk (already served). */
  private announce(changes: ExternalChange[]): void {
    if (changes.length === 0) return;
    for (const listener of this.externalListeners) {
      try {
        listener(changes);
      } catch (error) {
        this.logger.error({ err: error }, 'a listener of disk changes failed');
      }
    }
  }

  /** Files holding an unreadable edit, with why. */
  troubles(): Array<{ path: string; reason: string }> {
    return this.unreadable.list();
  }

  private lastProgress = 0;

  /**
   * Between two slices of a load: let the event loop run, then stop with SourceClosedError
   * when the source is closing (a shutdown during a long boot load does not wait for it).
   */
  private async nextSlice(): Promise<void> {
    await yieldToLoop();
    if (this.closing) throw new SourceClosedError(this.definition.id);
  }

  /** Log load progress of a large stream (at most about once a second; stores call it while reading). */
  private progress(done: number, total: number): void {
    if (total < PROGRESS_MIN) return;
    const now = performance.now();
    if (done < total && now - this.lastProgress < 1000) return;
    this.lastProgress = now;
    this.logger.info({ loaded: done, total }, done < total ? 'loading entries' : 'loading entries: files read, indexing');
  }

  open(): Promise<void> {
    if (this.closed) return Promise.reject(new SourceClosedError(this.definition.id));
    if (!this.loading) {
      this.loading = this.load().catch((error: unknown) => {
        // Let a later call retry (the folder may come back); report the cause meanwhile.
        this.loading = undefined;
        this.failure = error as Error;
        throw error;
      });
    }
    return this.loading;
  }

  private async load(): Promise<void> {
    if (this.after) await this.after;
    // Watch before reading, so an edit made while the files are read is not missed.
    if (this.watcher && this.unwatch.length === 0 && !this.closed) {
      this.unwatch = (this.store.watchedFolders?.() ?? []).map(([folder, listener]) => this.watcher!.watch(folder, listener));
    }
    // The loaded list becomes the key order itself, compacted in place (revived entries, no
    // duplicates): a second list of every entry was 24 MB of garbage at 1M entries, left in
    // the heap when the first entry is served (a load ends with its largest allocations).
    const entries = await this.store.load();
    this.table.clearKeys();
    // Hand the event loop back every few milliseconds (/healthz answers during a big load).
    const progress: IndexProgress = { next: 0, kept: 0, ascending: -Infinity };
    while (!this.indexSlice(entries, progress)) await this.nextSlice();
    entries.length = progress.kept;
    // Sources that read in key order (filebase with numeric file names) need no sort.
    this.table.loaded(entries);
    this.loaded = true;
    this.failure = undefined;
  }

  /**
   * One slice of a load's indexing: each entry revived and indexed by key, the kept ones
   * compacted to the front of `entries`. True once every entry is done, false after
   * LOAD_SLICE_MS. A synchronous function of its own, because a loop inside an async function
   * resumes unoptimized after each await (issue #33).
   */
  private indexSlice(entries: Entry[], progress: IndexProgress): boolean {
    const started = performance.now();
    let { kept, ascending } = progress;
    let i = progress.next;
    for (; i < entries.length; i++) {
      if ((i & 1023) === 0 && i > progress.next && performance.now() - started > LOAD_SLICE_MS) break;
      const entry = this.revive(entries[i]!);
      const key = entry[this.keyName];
      // While every key so far is a number above the one before, none can repeat: the lookup for
      // a duplicate is skipped (a cache miss per entry in a map of 1M keys, about 0.2 s).
      if (typeof key === 'number' && key > ascending) {
        ascending = key;
      } else {
        ascending = Infinity;
        if (this.table.has(key)) {
          this.logger.warn({ key: keyId(key) }, 'duplicate entry key at load; keeping the first');
          continue;
        }
      }
      this.table.index(key, entry);
      entries[kept++] = entry;
    }
    progress.next = i;
    progress.kept = kept;
    progress.ascending = ascending;
    return i === entries.length;
  }

  /** Cast what a file holds by the field types (see EntryReviver); problems are logged with the file. */
  private revive(entry: Entry): Entry {
    if (this.reviver === undefined) return entry;
    const revived = this.reviver(this.definition, entry);
    if (revived.problems.length > 0) {
      // Reported, never served silently uncast: the operator fixes the file.
      this.logger.warn({ path: this.store.originOf?.(entry), problems: revived.problems }, 'entry values do not match their field types; served as stored');
    }
    return revived.entry;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    for (const stop of this.unwatch) stop();
    this.unwatch = [];
    this.externalListeners.clear();
    await this.drain();
    this.closed = true;
    await this.store.close?.();
  }

  async healthy(): Promise<boolean> {
    if (this.closed) return false;
    if (this.loaded) return true;
    // Loading now: not ready yet, and /readyz must answer at once rather than wait for the load.
    if (this.loading) return false;
    try {
      await this.open();
      return true;
    } catch {
      return false;
    }
  }

  /** The load error when the last open failed (for logs and /readyz details). */
  get lastError(): Error | undefined {
    return this.failure;
  }

  async get(key: EntryKey): Promise<Entry | undefined> {
    if (!this.loaded) await this.open();
    const found = this.table.get(key);
    // A key whose file cannot be read is not "no such entry": the store may say why (409).
    if (found === undefined && this.unreadable.size > 0) this.store.checkMiss?.(key);
    return found;
  }

  peek(key: EntryKey): Entry | undefined | typeof NOT_AT_HAND {
    if (!this.loaded) return NOT_AT_HAND;
    const found = this.table.get(key);
    // Only the asynchronous get can tell a miss from an unreadable file (so GET one stays
    // synchronous while every file reads).
    return found === undefined && this.unreadable.size > 0 && this.store.checkMiss !== undefined ? NOT_AT_HAND : found;
  }

  async getMany(keys: EntryKey[]): Promise<Entry[]> {
    if (!this.loaded) await this.open();
    return this.table.getMany(keys);
  }

  async query(query: SourceQuery): Promise<Entry[]> {
    if (!this.loaded) await this.open();
    return this.table.run(query).entries;
  }

  async count(where: WhereClause[]): Promise<number> {
    if (!this.loaded) await this.open();
    return this.table.count(where);
  }

  async paginate(query: SourceQuery): Promise<SourcePage> {
    if (!this.loaded) await this.open();
    return this.table.run(query);
  }

  paginateNow(query: SourceQuery): SourcePage | typeof NOT_AT_HAND {
    return this.loaded ? this.table.run(query) : NOT_AT_HAND;
  }

  async maxIntegerKey(): Promise<number | undefined> {
    if (!this.loaded) await this.open();
    return this.table.maxIntegerKey();
  }

  /** Which indexes a filter would use (`index:<field>` per OR group; empty: a scan). For tests and diagnostics. */
  explain(where: WhereClause[]): string[] {
    return this.table.explain(where);
  }

  put(key: EntryKey, entry: Entry): Promise<void> {
    const id = keyId(key);
    const stored = entry[this.keyName] !== undefined && keyId(entry[this.keyName]) === id ? entry : { ...entry, [this.keyName]: key };
    return this.write(id, async () => {
      const previous = this.table.get(id);
      if (!previous) this.store.checkNewKey?.(id);
      await this.store.put(id, stored, previous);
      this.table.put(id, stored);
    });
  }

  delete(key: EntryKey): Promise<boolean> {
    const id = keyId(key);
    return this.write(id, async () => {
      const previous = this.table.get(id);
      if (!previous) return false;
      await this.store.delete(id, previous);
      this.table.remove(id, previous);
      return true;
    });
  }

  async truncate(): Promise<void> {
    if (this.closed) throw new SourceClosedError(this.definition.id);
    if (!this.loaded) await this.open();
    while (this.barrier) await this.barrier;
    let release!: () => void;
    this.barrier = new Promise<void>((resolve) => (release = resolve));
    try {
      await this.idle();
      await this.store.truncate(this.table.all());
      this.table.clear();
    } finally {
      this.barrier = undefined;
      release();
    }
  }

  async drain(): Promise<void> {
    while (this.barrier) await this.barrier;
    await this.idle();
  }

  private idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async write<T>(id: string, task: () => Promise<T>): Promise<T> {
    if (this.closed) throw new SourceClosedError(this.definition.id);
    if (!this.loaded) await this.open();
    while (this.barrier) await this.barrier;
    this.active++;
    try {
      return await this.locks.run(id, task);
    } finally {
      if (--this.active === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const wake of waiters) wake();
      }
    }
  }

  /**
   * File sync (#14): replace (or, with undefined, remove) one stored entry because its
   * file changed on disk; nothing is persisted. `entry` is as read (it is revived here).
   * Returns the change to announce, or undefined when nothing changed.
   */
  private replaceStored(id: string, entry: Entry | undefined): ExternalChange | undefined {
    const previous = this.table.get(id);
    if (entry) {
      const revived = this.revive(entry);
      if (previous && JSON.stringify(previous) === JSON.stringify(revived)) return undefined;
      this.table.put(id, revived);
      return { key: revived[this.keyName] as EntryKey, entry: revived, previous };
    }
    if (!previous) return undefined;
    this.table.remove(id, previous);
    return { key: previous[this.keyName] as EntryKey, entry: undefined, previous };
  }
}
