import { ByteBudgetMap, KeyedLock, type FileRoots, type FolderListener, type FolderWatcher, type Logger } from '../../kernel/index.js';
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
import { indexSpecs } from './criteria/index-specs.js';
import { HashIndex, SortedIndex, type Candidates, type SecondaryIndex } from './criteria/indexes.js';
import { compileWhere } from './criteria/match.js';
import { orderSignature } from './criteria/order.js';
import { plan } from './criteria/planner.js';
import { SortKeys } from './criteria/sort-keys.js';
import { compareKeys, keyId } from './criteria/values.js';
import { KeyMap, slotOf } from './key-map.js';
import { MatchCache } from './match-cache.js';
import { SourceClosedError } from './source-errors.js';
import { NOT_AT_HAND } from './contracts.js';

/** How many distinct sorted orders are kept between writes. */
const SORT_CACHE_SIZE = 8;
/** Byte budget of the whole sorted orders kept per stream, unless configured (`streams.caches.orders_bytes`). */
const DEFAULT_ORDERS_BYTES = 32 * 1024 * 1024;
/** Longest stretch a load keeps the event loop before yielding (ms). */
export const LOAD_SLICE_MS = 10;
/** Streams with at least this many files report their load progress (about once a second). */
const PROGRESS_MIN = 20_000;

/** Let pending I/O and timers run (setImmediate: after I/O callbacks). */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Whether entries are already in key order (one pass; numbers compared directly). */
function inKeyOrder(entries: readonly Entry[], keyName: string): boolean {
  for (let i = 1; i < entries.length; i++) {
    const a = entries[i - 1]![keyName];
    const b = entries[i]![keyName];
    if (typeof a === 'number' && typeof b === 'number' ? a >= b : compareKeys(a, b) >= 0) return false;
  }
  return true;
}

/** Pages ending within this many entries are picked by a top-k selection, not a full sort. */
const TOP_K_MAX = 1000;

/**
 * Whether a page ending at `end` of `count` ordered entries is picked by top-k: near the top,
 * or deeper while it is still a small share of the list (a heap of `end` rows beats a full
 * sort then: a page 100 of 50 per page in 100k entries).
 */
function selectsTop(end: number, count: number): boolean {
  return end <= TOP_K_MAX || end * 8 <= count;
}
/**
 * Automatic hash indexes: a declared field filtered by `=`/IN/CONTAINS this many times by a
 * scan, on a stream of at least AUTO_INDEX_MIN_ENTRIES, gets one (at most AUTO_INDEX_MAX per
 * stream). Building one costs a pass over the entries (about 10 ms per 100k).
 */
const AUTO_INDEX_AFTER = 3;
const AUTO_INDEX_MIN_ENTRIES = 2000;
const AUTO_INDEX_MAX = 8;

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
  private readonly byKey = new KeyMap();
  /** Every entry in key order (maintained incrementally). */
  private keyOrdered: Entry[] = [];
  /** Whole sorted orders (8 at most, within `streams.caches.orders_bytes`), until the next write. */
  private sorted = new ByteBudgetMap<string, Entry[]>(DEFAULT_ORDERS_BYTES, { maxItems: SORT_CACHE_SIZE });
  /** Ordered matches of recent filtered queries, dropped on every write. */
  private matches = new MatchCache();
  /** Secondary indexes (issue #16), kept in step with every write and disk change. */
  private readonly hashIndexes = new Map<string, HashIndex>();
  private readonly sortedIndexes = new Map<string, SortedIndex>();
  private readonly indexes: SecondaryIndex[] = [];
  /** Scans per field that an equality index would have narrowed (see AUTO_INDEX_AFTER). */
  private readonly scansByField = new Map<string, number>();
  private autoIndexes = 0;
  /** First entries of unfiltered orders answered by top-k (8 orders), until the next write. */
  private readonly sortedPrefixes = new Map<string, Entry[]>();
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
    for (const spec of indexSpecs(definition)) {
      const index = spec.kind === 'hash' ? new HashIndex(spec.field) : new SortedIndex(spec.field, this.keyName);
      if (index instanceof HashIndex) this.hashIndexes.set(spec.field, index);
      else this.sortedIndexes.set(spec.field, index);
      this.indexes.push(index);
    }
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
    this.matches = new MatchCache(budgets.matchBytes);
    this.sorted = new ByteBudgetMap(budgets.ordersBytes, { maxItems: SORT_CACHE_SIZE, name: 'sorted_orders' });
    return this;
  }

  /** Files above this size are reported and skipped (`streams.files.max_bytes`, issue #27). */
  protected maxBytes = Infinity;
  /** Where files may be read and written: a link out of these roots is not followed (issue #27). */
  protected fileRoots: FileRoots | undefined;

  /** The limits on the files read (`streams.files.max_bytes`, the application's roots). Returns this. */
  limitFiles(maxBytes: number, roots: FileRoots | undefined): this {
    this.maxBytes = maxBytes;
    this.fileRoots = roots;
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
  protected markUnreadable(file: string, reason: string | undefined, error?: unknown, lastGoodKept = true): void {
    if (reason === undefined) {
      if (this.unreadable.delete(file)) this.logger.info({ path: file }, 'the file reads again');
      return;
    }
    if (this.unreadable.get(file) === reason) return;
    this.unreadable.set(file, reason);
    // At load there is no last good version: the file is simply not served.
    this.logger.error({ path: file, err: error }, lastGoodKept ? `${reason}: the last good version is kept` : reason);
  }

  /** True while `file` holds an edit that cannot be read. */
  protected isUnreadable(file: string): boolean {
    return this.unreadable.has(file);
  }

  /** Why `file` cannot be read, or undefined when it can (or is not known). */
  protected unreadableReason(file: string): string | undefined {
    return this.unreadable.get(file);
  }

  /** Files that cannot be read right now (a miss checks them only when there are any). */
  protected get unreadableCount(): number {
    return this.unreadable.size;
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

  private lastProgress = 0;

  /**
   * Between two slices of a load: let the event loop run, then stop with SourceClosedError
   * when the source is closing (a shutdown during a long boot load does not wait for it).
   */
  protected async nextSlice(): Promise<void> {
    await yieldToLoop();
    if (this.closing) throw new SourceClosedError(this.definition.id);
  }

  /** Log load progress of a large stream (at most about once a second; subclasses call it while reading). */
  protected progress(done: number, total: number): void {
    if (total < PROGRESS_MIN) return;
    const now = performance.now();
    if (done < total && now - this.lastProgress < 1000) return;
    this.lastProgress = now;
    this.logger.info({ loaded: done, total }, done < total ? 'loading entries' : 'loading entries: files read, indexing');
  }

  /** Read every stored entry; each must hold its key field. The array is the engine's from then on (a fresh one per call). */
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
    // The loaded list becomes the key order itself, compacted in place (revived entries, no
    // duplicates): a second list of every entry was 24 MB of garbage at 1M entries, left in
    // the heap when the first entry is served (a load ends with its largest allocations).
    const entries = await this.loadAll();
    this.byKey.clear();
    let kept = 0;
    // While every key so far is a number above the one before, none can repeat: the lookup for
    // a duplicate is skipped (a cache miss per entry in a map of 1M keys, about 0.2 s).
    let ascending = -Infinity;
    let slice = performance.now();
    for (let i = 0; i < entries.length; i++) {
      // Hand the event loop back every few milliseconds (/healthz answers during a big load).
      if ((i & 1023) === 0 && performance.now() - slice > LOAD_SLICE_MS) {
        await this.nextSlice();
        slice = performance.now();
      }
      const entry = this.revive(entries[i]!);
      const key = entry[this.keyName];
      if (typeof key === 'number' && key > ascending) {
        ascending = key;
      } else {
        ascending = Infinity;
        if (this.byKey.has(key)) {
          this.logger.warn({ key: keyId(key) }, 'duplicate entry key at load; keeping the first');
          continue;
        }
      }
      this.byKey.set(key, entry);
      entries[kept++] = entry;
    }
    entries.length = kept;
    // Sources that read in key order (filebase with numeric file names) need no sort; else
    // one sort on precomputed key numbers (compareKeys runs two regexes per comparison).
    this.keyOrdered = inKeyOrder(entries, this.keyName) ? entries : new SortKeys([], this.keyName).sortAll(entries);
    this.rebuildIndexes();
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
    this.closing = true;
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
    return this.byKey.get(key);
  }

  peek(key: EntryKey): Entry | undefined | typeof NOT_AT_HAND {
    return this.loaded ? this.byKey.get(key) : NOT_AT_HAND;
  }

  async getMany(keys: EntryKey[]): Promise<Entry[]> {
    if (!this.loaded) await this.open();
    const found: Entry[] = [];
    const seen = new Set<string | number>();
    for (const key of keys) {
      const slot = slotOf(key);
      if (seen.has(slot)) continue;
      seen.add(slot);
      const entry = this.byKey.get(slot);
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
    const planned = plan(where, this.keyOrdered.length, this.candidateSource);
    if (!planned) this.noteScan(where);
    let n = 0;
    for (const entry of planned ? planned.candidates : this.keyOrdered) if (predicate(entry)) n++;
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

  /** Filter, order, skip and limit. */
  private run(query: SourceQuery): SourcePage {
    const skip = Math.max(0, query.skip ?? 0);
    const limit = query.limit === undefined ? undefined : Math.max(0, query.limit);
    if (query.where.length === 0) return { entries: this.pageOfAll(query.orderBy, skip, limit), total: this.keyOrdered.length };
    return this.filteredPage(query, skip, limit);
  }

  /**
   * The planner's candidate source: the key map for `=`/IN on the key, else the secondary
   * index of the field that proposes the fewest candidates.
   */
  private readonly candidateSource = (clause: WhereClause): Candidates | undefined => {
    if (clause.field === this.keyName && (clause.operator === '=' || clause.operator === 'IN')) {
      const values = clause.operator === 'IN' ? (Array.isArray(clause.value) ? clause.value : [clause.value]) : [clause.value];
      // keyId conflates 4 and "4": a superset, which the predicate then narrows.
      if (values.every((v) => typeof v === 'string' || typeof v === 'number')) {
        const found = [...new Set(values.map((v) => this.byKey.get(v)))].filter((e): e is Entry => e !== undefined);
        return { size: found.length, list: () => found };
      }
    }
    const hash = this.hashIndexes.get(clause.field)?.candidates(clause);
    const sorted = this.sortedIndexes.get(clause.field)?.candidates(clause);
    if (hash && sorted) return hash.size <= sorted.size ? hash : sorted;
    return hash ?? sorted;
  };

  /** Which indexes a filter would use (`index:<field>` per OR group; empty: a scan). For tests and diagnostics. */
  explain(where: WhereClause[]): string[] {
    return plan(where, this.keyOrdered.length, this.candidateSource)?.explain ?? [];
  }

  /**
   * One page of a filtered query. The planner narrows the candidates (or scans), the
   * reference predicate decides. A page within the first TOP_K_MAX entries is picked by
   * top-k and that prefix is kept (the first ask keeps its own page; a later page beyond it
   * keeps the first TOP_K_MAX), so the next pages are slices; deeper pages sort every match
   * once. Everything kept until the next write (match cache).
   */
  private filteredPage(query: SourceQuery, skip: number, limit: number | undefined): SourcePage {
    const end = limit === undefined ? undefined : skip + limit;
    const where = JSON.stringify(query.where);
    const signature = `${where}|${query.orderBy.length > 0 ? orderSignature(query.orderBy) : ''}`;
    const kept = this.matches.entry(signature);
    if (kept && (kept.total === undefined || (end !== undefined && end <= kept.list.length))) {
      return { entries: kept.list.slice(skip, end), total: kept.total ?? kept.list.length };
    }
    const predicate = compileWhere(query.where);
    const planned = plan(query.where, this.keyOrdered.length, this.candidateSource);
    let matches: Entry[];
    // Scanning a cached full order (or key order) keeps that order: nothing to sort.
    let inOrder: boolean;
    if (planned) {
      matches = planned.candidates.filter(predicate);
      inOrder = false;
    } else {
      this.noteScan(query.where);
      const base = query.orderBy.length === 0 ? this.keyOrdered : this.sorted.get(orderSignature(query.orderBy));
      matches = (base ?? this.keyOrdered).filter(predicate);
      inOrder = base !== undefined;
    }
    if (!inOrder) {
      const keys = new SortKeys(query.orderBy, this.keyName);
      if (end !== undefined && selectsTop(end, matches.length)) {
        const top = keys.top(matches, kept ? Math.max(end, TOP_K_MAX) : end);
        this.matches.set(signature, top, matches.length);
        return { entries: top.slice(skip, end), total: matches.length };
      }
      matches = keys.sortAll(matches);
    }
    this.matches.set(signature, matches);
    return { entries: matches.slice(skip, end), total: matches.length };
  }

  /**
   * One page of every entry in the requested order: key order as kept; a single-field
   * order from its sorted index; a cached full order; a page within the first TOP_K_MAX
   * entries by top-k; deeper pages by one full sort on precomputed keys, cached (8 orders)
   * until the next write.
   */
  private pageOfAll(orderBy: readonly OrderClause[], skip: number, limit: number | undefined): Entry[] {
    const end = limit === undefined ? undefined : skip + limit;
    if (orderBy.length === 0) return this.keyOrdered.slice(skip, end);
    const signature = orderSignature(orderBy);
    const cached = this.sorted.get(signature);
    if (cached) return cached.slice(skip, end);
    if (orderBy.length === 1) {
      const index = this.sortedIndexes.get(orderBy[0]!.field);
      if (index) return index.page(orderBy[0]!.direction, skip, limit ?? Infinity);
    }
    const keys = new SortKeys(orderBy, this.keyName);
    // A page near the top costs one pass (a full sort of 100k entries costs 25-100 ms here);
    // its prefix is kept so the next pages are slices (the first TOP_K_MAX once asked beyond).
    const prefix = this.sortedPrefixes.get(signature);
    if (end !== undefined && prefix !== undefined && end <= prefix.length) return prefix.slice(skip, end);
    if (end !== undefined && selectsTop(end, this.keyOrdered.length)) {
      const top = keys.top(this.keyOrdered, prefix ? Math.max(end, TOP_K_MAX) : end);
      if (!prefix && this.sortedPrefixes.size >= SORT_CACHE_SIZE) this.sortedPrefixes.delete(this.sortedPrefixes.keys().next().value!);
      this.sortedPrefixes.set(signature, top);
      return top.slice(skip, end);
    }
    const list = keys.sortAll(this.keyOrdered);
    // A reference per entry (8 bytes) and the signature: at 1M entries an order costs 8 MB.
    this.sorted.set(signature, list, list.length * 8 + signature.length * 2);
    return list.slice(skip, end);
  }

  /**
   * A filter was answered by a scan: count the equality clauses on declared, unindexed
   * fields; the AUTO_INDEX_AFTER-th scan of a field builds its hash index.
   */
  private noteScan(where: readonly WhereClause[]): void {
    if (this.autoIndexes >= AUTO_INDEX_MAX || this.keyOrdered.length < AUTO_INDEX_MIN_ENTRIES) return;
    for (const clause of where) {
      const { field, operator } = clause;
      if (operator !== '=' && operator !== 'IN' && operator !== 'CONTAINS') continue;
      if (field === this.keyName || this.hashIndexes.has(field) || !this.definition.fields.some((f) => f.handle === field)) continue;
      const scans = (this.scansByField.get(field) ?? 0) + 1;
      this.scansByField.set(field, scans);
      if (scans < AUTO_INDEX_AFTER) continue;
      const index = new HashIndex(field);
      for (const entry of this.keyOrdered) index.add(entry);
      this.hashIndexes.set(field, index);
      this.indexes.push(index);
      this.scansByField.delete(field);
      this.logger.info({ field }, 'hash index built automatically (the field is often filtered by equality)');
      if (++this.autoIndexes >= AUTO_INDEX_MAX) return;
    }
  }

  /** Rebuild every secondary index from the stored entries (load, truncate). */
  private rebuildIndexes(): void {
    for (const index of this.hashIndexes.values()) {
      index.clear();
      for (const entry of this.keyOrdered) index.add(entry);
    }
    for (const index of this.sortedIndexes.values()) index.build(this.keyOrdered);
    this.sortedPrefixes.clear();
  }

  /** Caches that a write makes stale (indexes are updated in place instead). */
  private forgetOrders(): void {
    this.sorted.clear();
    this.matches.clear();
    this.sortedPrefixes.clear();
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
      this.rebuildIndexes();
      this.forgetOrders();
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
    // The stored version now, not `previous`: a disk change may have replaced it meanwhile.
    const current = this.byKey.get(id);
    if (current !== undefined) for (const index of this.indexes) index.remove(current);
    for (const index of this.indexes) index.add(entry);
    this.byKey.set(id, entry);
    this.forgetOrders();
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
    const current = this.byKey.get(id);
    if (current !== undefined) for (const index of this.indexes) index.remove(current);
    this.byKey.delete(id);
    this.forgetOrders();
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
