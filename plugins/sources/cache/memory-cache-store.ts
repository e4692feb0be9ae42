import { ByteBudgetMap } from '../../../kernel/index.js';
import type { CacheStore } from '../contracts.js';

/** Most results kept per stream; the oldest goes first. */
const MAX_ITEMS = 1000;
/** A query longer than this (its key) is answered but not kept. */
const MAX_KEY_LENGTH = 4096;

/** What a cached value costs, roughly: 8 bytes per reference of a result list, 64 for anything else. */
function costOf(key: string, value: unknown): number {
  const refs = Array.isArray(value) ? value.length : (value as { entries?: unknown[] } | null)?.entries?.length ?? 0;
  return key.length * 2 + 64 + refs * 8;
}

/** The built-in `memory` cache store: a map with per-item expiry, bounded by count and bytes (oldest dropped first). */
export class MemoryCacheStore implements CacheStore {
  private readonly items: ByteBudgetMap<string, { value: unknown; expires: number }>;

  constructor(budgetBytes = 8 * 1024 * 1024) {
    this.items = new ByteBudgetMap(budgetBytes, { maxItems: MAX_ITEMS, name: 'query_results' });
  }

  get(key: string): unknown {
    const item = this.items.get(key);
    if (!item) return undefined;
    if (item.expires <= Date.now()) {
      this.items.delete(key);
      return undefined;
    }
    return item.value;
  }

  set(key: string, value: unknown, ttlSeconds: number | undefined): void {
    if (key.length > MAX_KEY_LENGTH) return;
    const expires = ttlSeconds === undefined || ttlSeconds <= 0 ? Infinity : Date.now() + ttlSeconds * 1000;
    this.items.set(key, { value, expires }, costOf(key, value));
  }

  clear(): void {
    this.items.clear();
  }
}
