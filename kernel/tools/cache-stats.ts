/**
 * Hits and misses of the named in-memory caches (ByteBudgetMap's `name` option), per
 * process: what `/metrics` reports as `streams_cache_hits_total{cache}`. Plain counters on
 * a shared object, so counting costs a cached GET one increment and nothing else.
 */
export interface CacheCounter {
  hits: number;
  misses: number;
}

const counters = new Map<string, CacheCounter>();

/** The counter of a cache name (shared by every cache of that name in the process). */
export function cacheCounter(name: string): CacheCounter {
  let counter = counters.get(name);
  if (counter === undefined) {
    counter = { hits: 0, misses: 0 };
    counters.set(name, counter);
  }
  return counter;
}

/** Every named cache's counts so far. */
export function cacheStatistics(): ReadonlyMap<string, Readonly<CacheCounter>> {
  return counters;
}
