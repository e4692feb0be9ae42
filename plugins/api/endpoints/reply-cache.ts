import { ByteBudgetMap } from '../../../kernel/index.js';
import type { EntryAttributes } from '../../fields/index.js';
import { freezeReply, type HttpReply, type HttpRequest } from '../../http/index.js';
import type { StreamDefinition } from '../../streams/index.js';

interface Cached {
  /** What it is cached under: the rule set's key and the URL (`keyOf`). */
  key: string;
  /** `{scheme}://{host}` the links were made with. */
  base: string;
  definition: StreamDefinition;
  entries: EntryAttributes[];
  /** `entries.length` and `entries[0]`, kept beside the other checks: a hit reads one object, not the list too. */
  count: number;
  first: EntryAttributes | undefined;
  total: number;
  etag: string;
  /**
   * The 200 answer itself, made once and frozen, its body encoded once (a hit is written
   * without another UTF-8 pass): a hit without `If-None-Match` hands back this very object (no
   * reply, header list or pair to build per request), and a transport that keeps what it
   * derived from a reply's headers (uws-head.ts) finds them unchanged by identity.
   */
  reply: Readonly<HttpReply>;
}

/**
 * Recent GET bodies keyed by path and query string. A hit must also have the same base URL
 * (scheme and host of the links), and name the
 * very same definition object and stored entry objects (and total), which change on
 * every write, so a cached body can never be stale. Bounded by the bytes it holds
 * (oldest dropped first: a hit moves nothing) and never keeps a large body, so a client
 * varying query strings cannot grow memory (found in review: 1.6 GB from 1,500 GETs).
 */
export class ReplyCache {
  private readonly items: ByteBudgetMap<string, Cached>;
  /**
   * The answer of one entry last found (GET one), by the entry object: a hit compares its key
   * with the request's instead of looking the URL up. A lookup by a string made for this
   * request hashes it, and on Node 22 and later also interns it in V8's string table (~2% of
   * a GET one on node:http, issue #33); the entry's identity hash is already there. Holds only
   * what `items` holds (dropped with it), so the byte budget stays the only bound.
   */
  private readonly byEntry = new WeakMap<EntryAttributes, Cached>();

  constructor(
    budgetBytes = 32 * 1024 * 1024,
    private readonly largestBody = 256 * 1024,
  ) {
    this.items = new ByteBudgetMap(budgetBytes, {
      name: 'api_replies',
      onDrop: (dropped) => {
        if (dropped.first !== undefined && this.byEntry.get(dropped.first) === dropped) this.byEntry.delete(dropped.first);
      },
    });
  }

  /** Bytes held now (for tests and metrics). */
  get bytes(): number {
    return this.items.bytes;
  }

  /** The rule set that applied comes first (issue #28): callers under other rules never share an answer. */
  private keyOf(request: HttpRequest, scope: string): string {
    const url = request.query === '' ? request.path : `${request.path}?${request.query}`;
    return scope === '' ? url : `${scope}\u0000${url}`;
  }

  /** `recall` of a single entry's answer (no array to build per request). */
  recallOne(request: HttpRequest, scope: string, base: string, definition: StreamDefinition, entry: EntryAttributes): Cached | undefined {
    const key = this.keyOf(request, scope);
    const known = this.byEntry.get(entry);
    if (known !== undefined && known.key === key && this.fits(known, base, definition, 1, 1)) {
      this.items.countHit();
      return known;
    }
    const hit = this.candidate(key, base, definition, 1, 1);
    if (hit === undefined || hit.first !== entry) return undefined;
    this.byEntry.set(entry, hit);
    return hit;
  }

  recall(request: HttpRequest, scope: string, base: string, definition: StreamDefinition, entries: EntryAttributes[], total: number): Cached | undefined {
    const hit = this.candidate(this.keyOf(request, scope), base, definition, total, entries.length);
    if (hit === undefined) return undefined;
    for (let i = 0; i < entries.length; i++) if (hit.entries[i] !== entries[i]) return undefined;
    return hit;
  }

  /** The cached answer under `key` when it was made with this base, definition, total and entry count. */
  private candidate(key: string, base: string, definition: StreamDefinition, total: number, count: number): Cached | undefined {
    const hit = this.items.get(key);
    return hit !== undefined && this.fits(hit, base, definition, total, count) ? hit : undefined;
  }

  private fits(hit: Cached, base: string, definition: StreamDefinition, total: number, count: number): boolean {
    return hit.base === base && hit.definition === definition && hit.total === total && hit.count === count;
  }

  remember(request: HttpRequest, scope: string, base: string, definition: StreamDefinition, entries: EntryAttributes[], total: number, body: string, etag: string): void {
    const key = this.keyOf(request, scope);
    this.items.delete(key);
    // A body has at least as many bytes as UTF-16 units: a large one is refused before encoding.
    // UTF-16 length is a close enough measure of what the key and base cost in memory.
    if (body.length + key.length + base.length > this.largestBody) return;
    const bytes = Buffer.from(body);
    const size = bytes.length + key.length + base.length;
    if (size > this.largestBody) return;
    const reply = freezeReply({ status: 200, headers: [['ETag', etag]], body: bytes });
    this.items.set(key, { key, base, definition, entries, count: entries.length, first: entries[0], total, etag, reply }, size);
  }
}
