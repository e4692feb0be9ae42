import type { Entry } from './contracts.js';

/**
 * The ordered matches of recent filtered queries, kept until the next write to the
 * stream. A repeated filter (the next page, the same dashboard query) then costs a slice
 * instead of a scan and a sort. Bounded by the number of entry references it holds, so
 * a few broad filters over a large stream cannot grow memory without limit.
 */
export class MatchCache {
  private readonly lists = new Map<string, Entry[]>();
  private held = 0;

  constructor(private readonly budget = 1_000_000) {}

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
    if (list.length > this.budget) return;
    const previous = this.lists.get(signature);
    if (previous) this.held -= previous.length;
    this.lists.delete(signature);
    while (this.held + list.length > this.budget && this.lists.size > 0) {
      const [coldest, dropped] = this.lists.entries().next().value!;
      this.lists.delete(coldest);
      this.held -= dropped.length;
    }
    this.lists.set(signature, list);
    this.held += list.length;
  }

  clear(): void {
    this.lists.clear();
    this.held = 0;
  }
}
