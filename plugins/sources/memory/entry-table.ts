import { ByteBudgetMap, type Logger } from '../../../kernel/index.js';
import { integerKeyValue, type StreamDefinition } from '../../streams/index.js';
import type { Entry, EntryKey, OrderClause, SourcePage, SourceQuery, WhereClause } from '../contracts.js';
import { indexSpecs } from '../criteria/index-specs.js';
import { HashIndex, SortedIndex, type Candidates, type SecondaryIndex } from '../criteria/indexes.js';
import { compileWhere } from '../criteria/match.js';
import { orderSignature } from '../criteria/order.js';
import { plan } from '../criteria/planner.js';
import { SortKeys } from '../criteria/sort-keys.js';
import { compareKeys } from '../criteria/values.js';
import { KeyMap, slotOf } from '../key-map.js';
import { MatchCache } from '../match-cache.js';
import { AutoIndexer } from './auto-index.js';

/** How many distinct sorted orders are kept between writes. */
const SORT_CACHE_SIZE = 8;
/** Byte budget of the whole sorted orders kept per stream, unless configured (`streams.caches.orders_bytes`). */
const DEFAULT_ORDERS_BYTES = 32 * 1024 * 1024;
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
 * The criteria engine of an in-memory stream: every entry by key (one Map read) and in key
 * order (kept sorted incrementally on writes), the secondary indexes kept in step, and the
 * caches of sorted orders and filtered matches, dropped on every write. It answers queries,
 * counts and pages; it knows nothing of loading, files or write concurrency (MemorySource
 * owns those and applies each change here once it is durable).
 */
export class EntryTable {
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
  private readonly autoIndex: AutoIndexer;
  /** First entries of unfiltered orders answered by top-k (8 orders), until the next write. */
  private readonly sortedPrefixes = new Map<string, Entry[]>();

  constructor(
    definition: StreamDefinition,
    private readonly keyName: string,
    private readonly logger: Logger,
  ) {
    this.autoIndex = new AutoIndexer(definition, keyName);
    for (const spec of indexSpecs(definition)) {
      const index = spec.kind === 'hash' ? new HashIndex(spec.field) : new SortedIndex(spec.field, this.keyName);
      if (index instanceof HashIndex) this.hashIndexes.set(spec.field, index);
      else this.sortedIndexes.set(spec.field, index);
      this.indexes.push(index);
    }
  }

  /** The byte budgets of the filtered-match cache and of the sorted-order cache. */
  limitCaches(budgets: { matchBytes: number; ordersBytes: number }): void {
    this.matches = new MatchCache(budgets.matchBytes);
    this.sorted = new ByteBudgetMap(budgets.ordersBytes, { maxItems: SORT_CACHE_SIZE, name: 'sorted_orders' });
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: unknown): Entry | undefined {
    return this.byKey.get(key);
  }

  has(key: unknown): boolean {
    return this.byKey.has(key);
  }

  /** Load: forget every entry (then `index` each loaded one and `loaded` the list). */
  clearKeys(): void {
    this.byKey.clear();
  }

  /** Load: one entry by key (the key order comes with `loaded`). */
  index(key: unknown, entry: Entry): void {
    this.byKey.set(key, entry);
  }

  /**
   * Load is over: the list becomes the key order itself (sorted here unless the source read
   * it in key order: filebase with numeric file names), indexes are rebuilt.
   */
  loaded(entries: Entry[]): void {
    // One sort on precomputed key numbers (compareKeys runs two regexes per comparison).
    this.keyOrdered = inKeyOrder(entries, this.keyName) ? entries : new SortKeys([], this.keyName).sortAll(entries);
    this.rebuildIndexes();
    this.sorted.clear();
  }

  /** Forget every entry (truncate). */
  clear(): void {
    this.byKey.clear();
    this.keyOrdered = [];
    this.rebuildIndexes();
    this.forgetOrders();
  }

  getMany(keys: EntryKey[]): Entry[] {
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

  count(where: WhereClause[]): number {
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

  maxIntegerKey(): number | undefined {
    // Key order puts numeric keys first: walk back from the end to the last numeric one.
    for (let i = this.keyOrdered.length - 1; i >= 0; i--) {
      const n = integerKeyValue(this.keyOrdered[i]![this.keyName]);
      if (n !== undefined) return n;
    }
    return undefined;
  }

  /** Filter, order, skip and limit. */
  run(query: SourceQuery): SourcePage {
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

  /** A filter was answered by a scan: the auto-index heuristic may build a hash index now. */
  private noteScan(where: readonly WhereClause[]): void {
    for (const field of this.autoIndex.noteScan(where, this.keyOrdered.length, (f) => this.hashIndexes.has(f))) {
      const index = new HashIndex(field);
      for (const entry of this.keyOrdered) index.add(entry);
      this.hashIndexes.set(field, index);
      this.indexes.push(index);
      this.logger.info({ field }, 'hash index built automatically (the field is often filtered by equality)');
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

  /** Store `entry` under `id` (a durable write, or a disk change): indexes in step, order caches dropped. */
  put(id: string, entry: Entry): void {
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

  /** Remove the entry of `id` (`previous`: the version the caller saw, for its position in key order). */
  remove(id: string, previous: Entry): void {
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

  /** Every entry in key order (the live list: do not change it). */
  all(): Entry[] {
    return this.keyOrdered;
  }
}
