import { KeyedLock, type FolderListener, type FolderWatcher, type Logger } from '../../kernel/index.js';
import { keyNameOf, type StreamDefinition } from '../streams/index.js';
import type {
  Entry,
  EntryKey,
  EntryReviver,
  ExternalChange,
  OrderClause,
  Source,
  SourceCapabilities,
  SourcePage,
  SourceQuery,
  WhereClause,
} from './contracts.js';
import { compileWhere } from './criteria/match.js';
import { compareEntries, orderSignature } from './criteria/order.js';
import { compareKeys, keyId } from './criteria/values.js';
import { MatchCache } from './match-cache.js';
import { SourceClosedError } from './source-errors.js';

/** How many distinct sorted orders are kept between writes. */
const SORT_CACHE_SIZE = 8;

/**
 * The shared engine of every source served from memory (filebase, file, self,
 * collection): the whole stream is loaded once, at first use; key lookups are one Map
 * read; the key order is kept sorted incrementally on writes; other sort orders are
 * cached until the next write. Subclasses only load and persist.
 *
 * Writes: one key at a time (a KeyedLock per key), memory updated only after the
 * subclass made the write durable, so a reader never sees an unacknowledged write.
 */
export abstract class MemorySource implements Source {
  abstract readonly type: string;
  abstract readonly capabilities: SourceCapabilities;
  protected readonly keyName: string;
  private readonly byKey = new Map<string, Entry>();
  /** Every entry in key order (maintained incrementally). */
  private keyOrdered: Entry[] = [];
  private readonly sorted = new Map<string, Entry[]>();
  /** Ordered matches of recent filtered queries, dropped on every write. */
  private matches = new MatchCache();
  private loading: Promise<void> | undefined;
  private loaded = false;
  private closed = false;
  private failure: Error | undefined;
  private readonly locks = new KeyedLock();
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** Set while a truncate runs: new writes wait for it. */
  private barrier: Promise<void> | undefined;

  /** Resolves when the source this one replaces has finished its writes. */
  protected after: Promise<void> | undefined;
  private reviver: EntryReviver | undefined;
  /** Live file sync: the shared watcher (unset: files are read at load and before writes only). */
  private watcher: FolderWatcher | undefined;
  private unwatch: Array<() => void> = [];
  private readonly externalListeners = new Set<(changes: ExternalChange[]) => void>();
  /** Files holding an edit that cannot be read, with why (the last good version is served). */
  private readonly unreadable = new Map<string, string>();

  constructor(
    protected readonly definition: StreamDefinition,
    protected readonly logger: Logger,
  ) {
    this.keyName = keyNameOf(definition);
  }

  /** Load only once `previous` resolved (see SourceContext.after). Returns this. */
  loadAfter(previous: Promise<void> | undefined): this {
    this.after = previous;
    return this;
  }

  /** The byte budget of the filtered-match cache (`streams.caches.match_bytes`). Returns this. */
  limitMatchCache(bytes: number): this {
    this.matches = new MatchCache(bytes);
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

  /** The folders live sync watches for this source, each with what to do on an event. */
  protected watchedFolders(): Array<[folder: string, listener: FolderListener]> {
    return [];
  }

  onExternalChange(listener: (changes: ExternalChange[]) => void): () => void {
    this.externalListeners.add(listener);
    return () => this.externalListeners.delete(listener);
  }

  /** Tell listeners about entries changed on disk (already served). */
  protected announce(changes: ExternalChange[]): void {
    if (changes.length === 0) return;
    for (const listener of this.externalListeners) {
      try {
        listener(changes);
      } catch (error) {
        this.logger.error({ err: error }, 'a listener of disk changes failed');
      }
    }
  }

  /**
   * Record a file whose edit cannot be read (logged once per reason), or with `reason`
   * undefined that it reads again. Listed in /readyz details; the last good version is served.
   */
  protected markUnreadable(file: string, reason: string | undefined, error?: unknown): void {
    if (reason === undefined) {
      if (this.unreadable.delete(file)) this.logger.info({ path: file }, 'the file reads again');
      return;
    }
    if (this.unreadable.get(file) === reason) return;
    this.unreadable.set(file, reason);
    this.logger.error({ path: file, err: error }, `${reason}: the last good version is kept`);
  }

  /** True while `file` holds an edit that cannot be read. */
  protected isUnreadable(file: string): boolean {
    return this.unreadable.has(file);
  }

  /** Files holding an unreadable edit, with why. */
  troubles(): Array<{ path: string; reason: string }> {
    return [...this.unreadable].map(([path, reason]) => ({ path, reason }));
  }

  /** Run `task` under the write lock of one key (disk changes must not interleave with a write of that key). */
  protected underKeyLock<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.locks.run(id, task);
  }

  /** Whether every entry is loaded (disk events that come before are caught by the load itself). */
  protected get isLoaded(): boolean {
    return this.loaded;
  }

  /** Where an entry is stored (a file), for load warnings; undefined when not a file. */
  protected originOf(_entry: Entry): string | undefined {
    return undefined;
  }

  /** Read every stored entry; each must hold its key field. */
  protected abstract loadAll(): Promise<Entry[]>;
  /** Make one put durable (called under the key's lock, memory not yet updated). */
  protected abstract persistPut(id: string, entry: Entry, previous: Entry | undefined): Promise<void>;
  protected abstract persistDelete(id: string, previous: Entry): Promise<void>;
  protected abstract persistTruncate(all: Entry[]): Promise<void>;
  /** Throw a BadRequestError when a new key cannot be stored here (file names...). */
  protected checkNewKey(_id: string): void {}
  protected async closeStore(): Promise<void> {}

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
      this.unwatch = this.watchedFolders().map(([folder, listener]) => this.watcher!.watch(folder, listener));
    }
    const entries = await this.loadAll();
    this.byKey.clear();
    for (let entry of entries) {
      entry = this.revive(entry);
      const id = keyId(entry[this.keyName]);
      if (this.byKey.has(id)) {
        this.logger.warn({ key: id }, 'duplicate entry key at load; keeping the first');
        continue;
      }
      this.byKey.set(id, entry);
    }
    this.keyOrdered = [...this.byKey.values()].sort(compareEntries([], this.keyName));
    this.sorted.clear();
    this.loaded = true;
    this.failure = undefined;
  }

  /** Cast what a file holds by the field types (see EntryReviver); problems are logged with the file. */
  protected revive(entry: Entry): Entry {
    if (this.reviver === undefined) return entry;
    const revived = this.reviver(this.definition, entry);
    if (revived.problems.length > 0) {
      // Reported, never served silently uncast: the operator fixes the file.
      this.logger.warn({ path: this.originOf(entry), problems: revived.problems }, 'entry values do not match their field types; served as stored');
    }
    return revived.entry;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const stop of this.unwatch) stop();
    this.unwatch = [];
    this.externalListeners.clear();
    await this.drain();
    this.closed = true;
    await this.closeStore();
  }

  async healthy(): Promise<boolean> {
    if (this.closed) return false;
    if (this.loaded) return true;
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
    return this.byKey.get(keyId(key));
  }

  async getMany(keys: EntryKey[]): Promise<Entry[]> {
    if (!this.loaded) await this.open();
    const found: Entry[] = [];
    const seen = new Set<string>();
    for (const key of keys) {
      const id = keyId(key);
      if (seen.has(id)) continue;
      seen.add(id);
      const entry = this.byKey.get(id);
      if (entry) found.push(entry);
    }
    return found;
  }

  async query(query: SourceQuery): Promise<Entry[]> {
    if (!this.loaded) await this.open();
    return this.run(query).entries;
  }

  async count(where: WhereClause[]): Promise<number> {
    if (!this.loaded) await this.open();
    if (where.length === 0) return this.byKey.size;
    const cached = this.matches.get(`${JSON.stringify(where)}|`);
    if (cached) return cached.length;
    const predicate = compileWhere(where);
    let n = 0;
    for (const entry of this.keyOrdered) if (predicate(entry)) n++;
    return n;
  }

  async paginate(query: SourceQuery): Promise<SourcePage> {
    if (!this.loaded) await this.open();
    return this.run(query);
  }

  async maxIntegerKey(): Promise<number | undefined> {
    if (!this.loaded) await this.open();
    // Key order puts numeric keys first: walk back from the end to the last numeric one.
    for (let i = this.keyOrdered.length - 1; i >= 0; i--) {
      const key = this.keyOrdered[i]![this.keyName];
      const n = typeof key === 'number' ? key : typeof key === 'string' && /^-?\d+$/.test(key) ? Number(key) : NaN;
      if (Number.isInteger(n)) return n;
    }
    return undefined;
  }

  /** Filter, order, skip and limit: a slice of the (cached) ordered matches. */
  private run(query: SourceQuery): SourcePage {
    const skip = Math.max(0, query.skip ?? 0);
    const end = query.limit === undefined ? undefined : skip + Math.max(0, query.limit);
    const list = query.where.length === 0 ? this.ordered(query.orderBy) : this.filtered(query);
    return { entries: list.slice(skip, end), total: list.length };
  }

  /**
   * Every match of a filtered query in the requested order, cached until the next write.
   * With a cached full order, filtering it keeps that order; otherwise only the matches
   * are sorted.
   */
  private filtered(query: SourceQuery): Entry[] {
    const signature = `${JSON.stringify(query.where)}|${query.orderBy.length > 0 ? orderSignature(query.orderBy) : ''}`;
    let list = this.matches.get(signature);
    if (list === undefined) {
      const predicate = compileWhere(query.where);
      const sorted = query.orderBy.length === 0 ? this.keyOrdered : this.sorted.get(orderSignature(query.orderBy));
      list = sorted ? sorted.filter(predicate) : this.keyOrdered.filter(predicate).sort(compareEntries(query.orderBy, this.keyName));
      this.matches.set(signature, list);
    }
    return list;
  }

  /** Every entry in the requested order: a full sort once per order between writes. */
  private ordered(orderBy: readonly OrderClause[]): Entry[] {
    if (orderBy.length === 0) return this.keyOrdered;
    const signature = orderSignature(orderBy);
    const cached = this.sorted.get(signature);
    if (cached) return cached;
    const list = this.keyOrdered.slice().sort(compareEntries(orderBy, this.keyName));
    if (this.sorted.size >= SORT_CACHE_SIZE) this.sorted.delete(this.sorted.keys().next().value!);
    this.sorted.set(signature, list);
    return list;
  }

  put(key: EntryKey, entry: Entry): Promise<void> {
    const id = keyId(key);
    const stored = entry[this.keyName] !== undefined && keyId(entry[this.keyName]) === id ? entry : { ...entry, [this.keyName]: key };
    return this.write(id, async () => {
      const previous = this.byKey.get(id);
      if (!previous) this.checkNewKey(id);
      await this.persistPut(id, stored, previous);
      this.applyPut(id, stored, previous);
    });
  }

  delete(key: EntryKey): Promise<boolean> {
    const id = keyId(key);
    return this.write(id, async () => {
      const previous = this.byKey.get(id);
      if (!previous) return false;
      await this.persistDelete(id, previous);
      this.applyDelete(id, previous);
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
      await this.persistTruncate(this.keyOrdered);
      this.byKey.clear();
      this.keyOrdered = [];
      this.sorted.clear();
      this.matches.clear();
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

  private applyPut(id: string, entry: Entry, _previous: Entry | undefined): void {
    this.byKey.set(id, entry);
    this.sorted.clear();
    this.matches.clear();
    // By position, not by `previous`: a disk change may have added or removed it meanwhile.
    const index = this.keyIndex(entry[this.keyName]);
    if (index.found) this.keyOrdered[index.at] = entry;
    else this.keyOrdered.splice(index.at, 0, entry);
  }

  /**
   * File sync (#14): replace (or, with undefined, remove) one stored entry because its
   * file changed on disk; nothing is persisted. `entry` is as read (it is revived here).
   * Returns the change to announce, or undefined when nothing changed.
   */
  protected replaceStored(id: string, entry: Entry | undefined): ExternalChange | undefined {
    const previous = this.byKey.get(id);
    if (entry) {
      const revived = this.revive(entry);
      if (previous && JSON.stringify(previous) === JSON.stringify(revived)) return undefined;
      this.applyPut(id, revived, previous);
      return { key: revived[this.keyName] as EntryKey, entry: revived, previous };
    }
    if (!previous) return undefined;
    this.applyDelete(id, previous);
    return { key: previous[this.keyName] as EntryKey, entry: undefined, previous };
  }

  /** The stored entry of a key id (no load; undefined when none). */
  protected storedEntry(id: string): Entry | undefined {
    return this.byKey.get(id);
  }

  private applyDelete(id: string, previous: Entry): void {
    this.byKey.delete(id);
    this.sorted.clear();
    this.matches.clear();
    const index = this.keyIndex(previous[this.keyName]);
    if (index.found) this.keyOrdered.splice(index.at, 1);
  }

  /** Binary search of a key in the key order. */
  private keyIndex(key: unknown): { at: number; found: boolean } {
    let lo = 0;
    let hi = this.keyOrdered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareKeys(this.keyOrdered[mid]![this.keyName], key);
      if (c === 0) return { at: mid, found: true };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return { at: lo, found: false };
  }

  /** Every entry in key order (snapshot; subclasses use it to serialize a whole file). */
  protected all(): Entry[] {
    return this.keyOrdered;
  }
}
