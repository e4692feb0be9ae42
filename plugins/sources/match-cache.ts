import type { Entry } from './contracts.js';

/**
 * The ordered matches of recent filtered queries, kept until the next write to the
 * stream. A repeated filter (the next page, the same dashboard query) then costs a slice
 * instead of a scan and a sort. Bounded by the entry references it holds (an empty
 * list counts as one) and by the number of lists, so neither a few broad filters nor
 * many distinct filters matching nothing can grow memory without limit.
 */
export class MatchCache {
  private readonly lists = new Map<string, Entry[]>();
  private held = 0;

  constructor(
    private readonly budget = 1_000_000,
    private readonly maxLists = 1024,
  ) {}

  get(signature: string): Entry[] | undefined {
    const list = this.lists.get(signature);
    if (list !== undefined) {
      // Most recently used last, so eviction drops the coldest first.
      this.lists.delete(signature);
      this.lists.set(signature, list);
    }
    return list;
  }

  set(signature: string, list: Entry[]): void {
    const cost = Math.max(1, list.length);
    if (cost > this.budget) return;
    const previous = this.lists.get(signature);
    if (previous) this.held -= Math.max(1, previous.length);
    this.lists.delete(signature);
    while ((this.held + cost > this.budget || this.lists.size >= this.maxLists) && this.lists.size > 0) {
      const [coldest, dropped] = this.lists.entries().next().value!;
      this.lists.delete(coldest);
      this.held -= Math.max(1, dropped.length);
    }
    this.lists.set(signature, list);
    this.held += cost;
  }

  clear(): void {
    this.lists.clear();
    this.held = 0;
  }
}
