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

/** The built-in `memory` cache store: a Map with per-item expiry, bounded by count and bytes. */
export class MemoryCacheStore implements CacheStore {
  private readonly items = new Map<string, { value: unknown; expires: number; cost: number }>();
  private bytes = 0;

  constructor(private readonly budgetBytes = 8 * 1024 * 1024) {}

  get(key: string): unknown {
    const item = this.items.get(key);
    if (!item) return undefined;
    if (item.expires <= Date.now()) {
      this.drop(key);
      return undefined;
    }
    return item.value;
  }

  set(key: string, value: unknown, ttlSeconds: number | undefined): void {
    if (key.length > MAX_KEY_LENGTH) return;
    const cost = costOf(key, value);
    if (cost > this.budgetBytes) return;
    this.drop(key);
    while ((this.items.size >= MAX_ITEMS || this.bytes + cost > this.budgetBytes) && this.items.size > 0) this.drop(this.items.keys().next().value!);
    const expires = ttlSeconds === undefined || ttlSeconds <= 0 ? Infinity : Date.now() + ttlSeconds * 1000;
    this.items.set(key, { value, expires, cost });
    this.bytes += cost;
  }

  clear(): void {
    this.items.clear();
    this.bytes = 0;
  }

  private drop(key: string): void {
    const item = this.items.get(key);
    if (item === undefined) return;
    this.items.delete(key);
    this.bytes -= item.cost;
  }
}
