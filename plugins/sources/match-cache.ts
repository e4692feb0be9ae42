import { ByteBudgetMap } from '../../kernel/index.js';
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
  private readonly lists: ByteBudgetMap<string, { list: Entry[]; total: number | undefined }>;

  constructor(budgetBytes = 8 * 1024 * 1024, maxLists = 1024) {
    this.lists = new ByteBudgetMap(budgetBytes, { maxItems: maxLists, touchOnGet: true, name: 'filter_matches' });
  }

  get(signature: string): Entry[] | undefined {
    const item = this.entry(signature);
    return item && item.total === undefined ? item.list : undefined;
  }

  /**
   * The kept list with, for a prefix (the first entries of a longer ordered list, kept by a
   * top-k), the length of the whole list; `total` undefined: the list is whole. Reading it
   * makes it the most recently used (eviction drops the coldest first).
   */
  entry(signature: string): { list: Entry[]; total: number | undefined } | undefined {
    return this.lists.get(signature);
  }

  /** Keep `list`; with `total`, it is only the first entries of an ordered list that long. */
  set(signature: string, list: Entry[], total?: number): void {
    if (signature.length > MAX_SIGNATURE_LENGTH) return;
    const cost = Math.max(1, list.length) * REFERENCE_BYTES + signature.length * 2;
    this.lists.set(signature, { list, total: total === undefined || total <= list.length ? undefined : total }, cost);
  }

  /** Bytes held now (for tests and metrics). */
  get bytes(): number {
    return this.lists.bytes;
  }

  clear(): void {
    this.lists.clear();
  }
}
