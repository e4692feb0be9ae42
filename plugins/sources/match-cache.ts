import type { Entry } from './contracts.js';

/** What one kept entry reference costs, in bytes (a pointer in the list). */
const REFERENCE_BYTES = 8;
/** A filter longer than this is answered but not kept (its key alone would cost more than its use). */
export const MAX_SIGNATURE_LENGTH = 4096;

/**
 * The ordered matches of recent filtered queries, kept until the next write to the
 * stream. A repeated filter (the next page, the same dashboard query) then costs a slice
 * instead of a scan and a sort. Bounded by bytes (the references a list holds and its key,
 * the filter's text), by the number of lists, and by the key's length, so neither broad
 * filters, nor many filters matching nothing, nor huge filter values can grow memory
 * without limit (found in review: distinct 1 MB `where` values exhausted the heap).
 */
export class MatchCache {
  private readonly lists = new Map<string, { list: Entry[]; cost: number; total: number | undefined }>();
  private held = 0;

  constructor(
    private readonly budgetBytes = 8 * 1024 * 1024,
    private readonly maxLists = 1024,
  ) {}

  get(signature: string): Entry[] | undefined {
    const item = this.entry(signature);
    return item && item.total === undefined ? item.list : undefined;
  }

  /**
   * The kept list with, for a prefix (the first entries of a longer ordered list, kept by a
   * top-k), the length of the whole list; `total` undefined: the list is whole.
   */
  entry(signature: string): { list: Entry[]; total: number | undefined } | undefined {
    const item = this.lists.get(signature);
    if (item !== undefined) {
      // Most recently used last, so eviction drops the coldest first.
      this.lists.delete(signature);
      this.lists.set(signature, item);
    }
    return item;
  }

  /** Keep `list`; with `total`, it is only the first entries of an ordered list that long. */
  set(signature: string, list: Entry[], total?: number): void {
    if (signature.length > MAX_SIGNATURE_LENGTH) return;
    const cost = Math.max(1, list.length) * REFERENCE_BYTES + signature.length * 2;
    if (cost > this.budgetBytes) return;
    const previous = this.lists.get(signature);
    if (previous) this.held -= previous.cost;
    this.lists.delete(signature);
    if (this.held + cost > this.budgetBytes || this.lists.size >= this.maxLists) {
      // One iterator for the whole eviction (see ReplyCache.remember: a fresh iterator per
      // eviction walks every deleted slot before it), down to three quarters of each bound.
      // Small caches evict exactly what is needed (least recently used first).
      const slack = this.lists.size > 64 ? 0.75 : 1;
      const coldest = this.lists.entries();
      while ((this.held + cost > this.budgetBytes * slack || this.lists.size >= Math.max(1, Math.floor(this.maxLists * slack))) && this.lists.size > 0) {
        const [signature, dropped] = coldest.next().value!;
        this.lists.delete(signature);
        this.held -= dropped.cost;
      }
    }
    this.lists.set(signature, { list, cost, total: total === undefined || total <= list.length ? undefined : total });
    this.held += cost;
  }

  /** Bytes held now (for tests and metrics). */
  get bytes(): number {
    return this.held;
  }

  clear(): void {
    this.lists.clear();
    this.held = 0;
  }
}
