import { cacheCounter, type CacheCounter } from './cache-stats.js';

/**
 * A Map whose values each declare what they cost in bytes, held within a byte budget (and
 * optionally a count): the one eviction every in-memory cache of the product uses, so no
 * cache can grow without bound (the security standard: every cache has a byte limit).
 *
 * - `set` refuses a value costing more than the whole budget (it would only empty the map).
 * - Eviction drops the oldest first: oldest set, or, with `touchOnGet`, least recently read.
 *   A map of more than 64 values evicts down to three quarters of its bounds in one pass of
 *   one iterator: a fresh `keys().next()` per eviction walks every slot deleted before it
 *   (V8 keeps them until a rehash), about 4 µs per insert once thousands were dropped.
 */
export class ByteBudgetMap<K, V> {
  // Values and their costs apart: a read (a cached GET's hot path) touches the value alone,
  // not a record around it. Both maps keep the same order.
  private readonly values = new Map<K, V>();
  private readonly costs = new Map<K, number>();
  private held = 0;
  /** Hits and misses of `get`, when the map is named (kernel/cache-stats.ts, for /metrics). */
  private readonly counter: CacheCounter | undefined;

  constructor(
    private readonly budgetBytes: number,
    private readonly options: {
      maxItems?: number;
      touchOnGet?: boolean;
      name?: string;
      /** Told of every value that leaves the map (evicted, replaced, deleted, cleared): an index kept beside it follows. */
      onDrop?: (value: V) => void;
    } = {},
  ) {
    this.counter = options.name === undefined ? undefined : cacheCounter(options.name);
  }

  /** Count a hit found through an index kept beside the map (see `onDrop`), as `get` counts its own. */
  countHit(): void {
    if (this.counter !== undefined) this.counter.hits++;
  }

  /** The value of `key` (with `touchOnGet`, it becomes the most recently used). */
  get(key: K): V | undefined {
    const value = this.values.get(key);
    if (this.counter !== undefined) {
      if (value === undefined) this.counter.misses++;
      else this.counter.hits++;
    }
    if (value !== undefined && this.options.touchOnGet === true) {
      const cost = this.costs.get(key)!;
      this.values.delete(key);
      this.costs.delete(key);
      this.values.set(key, value);
      this.costs.set(key, cost);
    }
    return value;
  }

  /** Keep `value` at `cost` bytes; false (and nothing kept) when it alone exceeds the budget. */
  set(key: K, value: V, cost: number): boolean {
    this.delete(key);
    if (cost > this.budgetBytes) return false;
    const maxItems = this.options.maxItems ?? Infinity;
    if (this.held + cost > this.budgetBytes || this.values.size >= maxItems) {
      const slack = this.values.size > 64 ? 0.75 : 1;
      const countBound = Math.max(1, Math.floor(maxItems * slack));
      const oldest = this.costs.entries();
      while ((this.held + cost > this.budgetBytes * slack || this.values.size >= countBound) && this.values.size > 0) {
        const [dropped, droppedCost] = oldest.next().value!;
        const value = this.values.get(dropped)!;
        this.values.delete(dropped);
        this.costs.delete(dropped);
        this.held -= droppedCost;
        this.options.onDrop?.(value);
      }
    }
    this.values.set(key, value);
    this.costs.set(key, cost);
    this.held += cost;
    return true;
  }

  delete(key: K): boolean {
    const cost = this.costs.get(key);
    if (cost === undefined) return false;
    const value = this.values.get(key)!;
    this.values.delete(key);
    this.costs.delete(key);
    this.held -= cost;
    this.options.onDrop?.(value);
    return true;
  }

  clear(): void {
    const onDrop = this.options.onDrop;
    if (onDrop !== undefined) for (const value of this.values.values()) onDrop(value);
    this.values.clear();
    this.costs.clear();
    this.held = 0;
  }

  /** Bytes held now (for tests and metrics). */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.values.size;
  }
}
