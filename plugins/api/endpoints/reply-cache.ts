import type { EntryAttributes } from '../../fields/index.js';
import type { HttpRequest } from '../../http/index.js';
import type { StreamDefinition } from '../../streams/index.js';

interface Cached {
  definition: StreamDefinition;
  entries: EntryAttributes[];
  total: number;
  body: string;
  etag: string;
}

/**
 * Recent GET bodies keyed by base URL, path and query string. A hit must also name the
 * very same definition object and stored entry objects (and total), which change on
 * every write, so a cached body can never be stale. Bounded (least recently used
 * dropped), so distinct query strings cannot grow it without limit.
 */
export class ReplyCache {
  private readonly items = new Map<string, Cached>();

  constructor(private readonly capacity = 4096) {}

  private keyOf(request: HttpRequest, base: string): string {
    return `${base}${request.path}?${request.query}`;
  }

  recall(request: HttpRequest, base: string, definition: StreamDefinition, entries: EntryAttributes[], total: number): Cached | undefined {
    const key = this.keyOf(request, base);
    const hit = this.items.get(key);
    if (hit === undefined || hit.definition !== definition || hit.total !== total || hit.entries.length !== entries.length) return undefined;
    for (let i = 0; i < entries.length; i++) if (hit.entries[i] !== entries[i]) return undefined;
    return hit;
  }

  remember(request: HttpRequest, base: string, definition: StreamDefinition, entries: EntryAttributes[], total: number, body: string, etag: string): void {
    const key = this.keyOf(request, base);
    this.items.delete(key);
    if (this.items.size >= this.capacity) this.items.delete(this.items.keys().next().value!);
    this.items.set(key, { definition, entries, total, body, etag });
  }
}
