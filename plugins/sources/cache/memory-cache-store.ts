import type { CacheStore } from '../contracts.js';

/** Most results kept per stream; the oldest goes first. */
const MAX_ITEMS = 1000;

/** The built-in `memory` cache store: a Map with per-item expiry. */
export class MemoryCacheStore implements CacheStore {
  private readonly items = new Map<string, { value: unknown; expires: number }>();

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
    if (this.items.size >= MAX_ITEMS) this.items.delete(this.items.keys().next().value!);
    const expires = ttlSeconds === undefined || ttlSeconds <= 0 ? Infinity : Date.now() + ttlSeconds * 1000;
    this.items.set(key, { value, expires });
  }

  clear(): void {
    this.items.clear();
  }
}
