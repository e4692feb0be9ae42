/**
 * A small path router shared by the transport (top-level routes) and the API (its
 * endpoints under an interface prefix). Exact paths are one Map lookup; parameter
 * patterns are compared segment by segment; prefix patterns (`/api/*`) are tried
 * longest first. It knows every method of a path so that it can answer 405 + Allow.
 */

import { ByteBudgetMap } from '../../kernel/index.js';

export interface RouteMatch<T> {
  /** The handler for the method, or undefined when the path exists with other methods only. */
  value: T | undefined;
  params: Record<string, string>;
  /** Methods served on this path (for `Allow`), HEAD included when GET is. */
  allow: string[];
  /** The matched pattern (for logs and per-route data). */
  pattern: string;
}

interface PatternEntry<T> {
  pattern: string;
  /** Literal segment, or null for a `:param` segment. */
  segments: Array<string | null>;
  names: string[];
  byMethod: Map<string, T>;
  any?: T;
  allow: string[];
}

/** What a path leads to, whatever the method: its handlers by method, `Allow` and pattern. */
interface Routed<T> {
  byMethod: Map<string, T>;
  any?: T;
  allow: string[];
  pattern: string;
}

/** A path matched before, with what it found (see `Router.found`). */
interface Found<T> {
  /** The path itself: another path of the same hash is a miss (and takes its place). */
  path: string;
  from: number;
  decode: (raw: string) => string;
  route: Routed<T>;
  params: Record<string, string>;
  /** The match last answered for this path and its method (a path mostly sees one method). */
  method: string;
  match: RouteMatch<T>;
}

/**
 * Bytes of matches kept per router: about 3,500 paths of 30 characters. A record's cost is
 * counted as its path twice (the key and the match) plus the objects around it.
 */
const FOUND_BYTES = 1024 * 1024;
const FOUND_OVERHEAD = 256;

interface PrefixEntry<T> {
  pattern: string;
  /** The prefix without the trailing `*`, e.g. `/api/` (or `/` for `/*`). */
  prefix: string;
  /** The prefix without its trailing slash: `/api` also matches the prefix route. */
  bare: string;
  byMethod: Map<string, T>;
  any?: T;
  allow: string[];
  /** Its answers by method, made on first use: a path below the prefix keeps nothing of its own (see `match`). */
  matches: Map<string, RouteMatch<T>>;
}

/** Parameter values a router keeps to share, and the longest it keeps: at most 256 x 64 characters (~32 KiB). */
const SHARED_VALUES = 256;
const SHARED_LENGTH = 64;
/** Methods a prefix keeps an answer for (any more are answered without keeping: no growth from odd method names). */
const PREFIX_METHODS = 8;

/** The parameters of a path without any (frozen: shared by every such request). */
export const NO_PARAMS: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

function computeAllow(byMethod: Map<string, unknown>, any: unknown): string[] {
  if (any !== undefined) return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  const methods = new Set(byMethod.keys());
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods];
}

export class Router<T> {
  private readonly exact = new Map<string, PatternEntry<T>>();
  /** Segment counts of the exact paths: a path of another count skips their lookup. */
  private readonly exactCounts = new Set<number>();
  /** One more than the most segments of any exact path or pattern: counting stops there. */
  private countCap = 1;
  private readonly patterns: PatternEntry<T>[] = [];
  /** `patterns` by their number of segments (a path is tried only against its own count). */
  private bySegments: Array<PatternEntry<T>[] | undefined> = [];
  private readonly prefixes: PrefixEntry<T>[] = [];
  /**
   * The matches of recent paths (issue #33): a path requested again (the same entry read by
   * many clients) costs one Map lookup instead of finding its slashes, comparing segments and
   * decoding parameters again (~0.3 µs of a GET one's ~7 µs, both routers). What is kept is
   * frozen and shared, as `NO_PARAMS` always was. Emptied when a route is added.
   *
   * Keyed by a hash of the path computed here (`pathHash`), not by the path: on Node 26 a Map
   * lookup by a string made for this request also interns it in V8's string table, and that
   * cost node:http's GET one 3.9% against the hash (side by side, both ways; Node 20 and 22:
   * the same either way). Two paths of one hash share a slot: the later one replaces the
   * other, and a lookup checks the path, so a collision is a miss, never a wrong match.
   */
  private readonly found = new ByteBudgetMap<number, Found<T>>(FOUND_BYTES);
  /** Parameter values met lately, each kept once (see `shared`). */
  private readonly values = new Map<string, string>();

  /** Bytes of the matches remembered now (for tests). */
  get rememberedBytes(): number {
    return this.found.bytes;
  }

  /** `method`: a method, a list of methods, or `*`. */
  add(method: string | string[], pattern: string, value: T): void {
    this.found.clear();
    for (const entry of this.prefixes) entry.matches.clear();
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with "/": ${pattern}`);
    const methods = Array.isArray(method) ? method : [method];
    if (pattern === '/*' || pattern.endsWith('/*')) {
      const prefix = pattern.slice(0, -1);
      let entry = this.prefixes.find((p) => p.pattern === pattern);
      if (!entry) {
        entry = { pattern, prefix, bare: prefix.length > 1 ? prefix.slice(0, -1) : '/', byMethod: new Map(), allow: [], matches: new Map() };
        this.prefixes.push(entry);
        this.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
      }
      this.assign(entry, methods, value);
      return;
    }
    const normalized = pattern.length > 1 && pattern.endsWith('/') ? pattern.slice(0, -1) : pattern;
    const raw = normalized.split('/').slice(1);
    const hasParams = raw.some((s) => s.startsWith(':'));
    if (!hasParams) {
      let entry = this.exact.get(normalized);
      if (!entry) {
        entry = { pattern: normalized, segments: raw, names: [], byMethod: new Map(), allow: [] };
        this.exact.set(normalized, entry);
        const count = segmentCount(normalized);
        this.exactCounts.add(count);
        this.countCap = Math.max(this.countCap, count + 1);
      }
      this.assign(entry, methods, value);
      return;
    }
    let entry = this.patterns.find((p) => p.pattern === normalized);
    if (!entry) {
      entry = {
        pattern: normalized,
        segments: raw.map((s) => (s.startsWith(':') ? null : s)),
        names: raw.filter((s) => s.startsWith(':')).map((s) => s.slice(1)),
        byMethod: new Map(),
        allow: [],
      };
      this.patterns.push(entry);
      // Fewer parameters first: a literal segment beats a parameter at the same place.
      this.patterns.sort((a, b) => a.names.length - b.names.length);
      this.bySegments = [];
      for (const p of this.patterns) (this.bySegments[p.segments.length] ??= []).push(p);
      this.countCap = Math.max(this.countCap, entry.segments.length + 1);
    }
    this.assign(entry, methods, value);
  }

  private assign(entry: { byMethod: Map<string, T>; any?: T; allow: string[] }, methods: string[], value: T): void {
    for (const m of methods) {
      if (m === '*') entry.any = value;
      else entry.byMethod.set(m.toUpperCase(), value);
    }
    entry.allow = computeAllow(entry.byMethod, entry.any);
  }

  /**
   * Find the route of `method` + `path`. Undefined when no pattern matches the path at
   * all (404). `decode` turns a raw parameter segment into its value (it may throw).
   * `from`: match the part of `path` from this index on (a `/`: the path below a prefix,
   * without cutting it out).
   */
  match(method: string, path: string, decode: (raw: string) => string = decodeURIComponent, from = 0): RouteMatch<T> | undefined {
    if (from === 0 && this.prefixes.length > 0) {
      // A path no exact route or pattern can take (none has its number of segments) goes to a
      // prefix route, found without the cache: nothing is kept or looked up per path. The
      // cache's records are memory a server reads for each path it serves (bucket, record,
      // match): with many paths in turn (1,000 entries read by many clients) each read was a
      // likely cache miss, where the prefix's answer is one object every such path shares.
      const count = findSlashes(path, this.countCap, 0);
      if (!this.exactCounts.has(count) && this.bySegments[count] === undefined) return this.belowPrefix(method, path);
    }
    const hash = pathHash(path);
    const known = this.found.get(hash);
    if (known !== undefined && known.path === path && known.from === from && known.decode === decode) {
      if (known.method !== method) {
        known.method = method;
        known.match = matchOf(known.route, known.params, method);
      }
      return known.match;
    }
    const found = this.find(path, decode, from);
    if (found === undefined) return undefined;
    const params = found.params === NO_PARAMS ? NO_PARAMS : Object.freeze(this.shared(found.params));
    const match = matchOf(found.route, params, method);
    this.found.set(hash, { path, from, decode, route: found.route, params, method, match }, 2 * path.length + FOUND_OVERHEAD);
    return match;
  }

  /**
   * `params` with each value replaced by the string kept for it, when one is: the paths of one
   * stream's entries then share one string for the stream, and a handler comparing it with
   * the last one it saw (`LastReadMap`) finds the same object instead of reading another copy's
   * characters, one more place in memory per path.
   */
  private shared(params: Record<string, string>): Record<string, string> {
    for (const name of Object.keys(params)) {
      const value = params[name]!;
      if (value.length > SHARED_LENGTH) continue;
      const kept = this.values.get(value);
      if (kept !== undefined) params[name] = kept;
      else {
        // Bounded by count: a crowd of distinct values (entry keys) only starts it over.
        if (this.values.size >= SHARED_VALUES) this.values.clear();
        this.values.set(value, value);
      }
    }
    return params;
  }

  /** The answer of the longest prefix route `path` is under (one per prefix and method, kept on the prefix). */
  private belowPrefix(method: string, path: string): RouteMatch<T> | undefined {
    for (const entry of this.prefixes) {
      if (!path.startsWith(entry.prefix) && path !== entry.bare) continue;
      let match = entry.matches.get(method);
      if (match === undefined) {
        match = matchOf(entry, NO_PARAMS, method);
        if (entry.matches.size < PREFIX_METHODS) entry.matches.set(method, match);
      }
      return match;
    }
    return undefined;
  }

  /** The route of `path` and its parameters, found without the cache (a bad parameter encoding throws). */
  private find(path: string, decode: (raw: string) => string, from: number): { route: Routed<T>; params: Record<string, string> } | undefined {
    const count = findSlashes(path, this.countCap, from);
    const exact = this.exactCounts.has(count) ? this.exact.get(from === 0 ? path : path.slice(from)) : undefined;
    if (exact) return { route: exact, params: NO_PARAMS };
    const candidates = this.bySegments[count];
    if (candidates !== undefined) {
      for (const entry of candidates) {
        if (!segmentsMatch(entry.segments, path)) continue;
        return { route: entry, params: entry.names.length > 0 ? paramsOf(entry, path, decode) : NO_PARAMS };
      }
    }
    if (this.prefixes.length > 0 && from > 0) path = path.slice(from);
    for (const entry of this.prefixes) {
      if (path.startsWith(entry.prefix) || path === entry.bare) return { route: entry, params: NO_PARAMS };
    }
    return undefined;
  }
}

/** FNV-1a of the path's UTF-16 units, to 30 bits (a small integer: V8 hashes it without a lookup of its own). */
export function pathHash(path: string): number {
  let hash = 0x811c9dc5 | 0;
  for (let i = 0; i < path.length; i++) hash = Math.imul(hash ^ path.charCodeAt(i), 0x01000193);
  return hash & 0x3fffffff;
}

/** The answer of `match` for one method (frozen: shared by every request of the path). */
function matchOf<T>(route: Routed<T>, params: Record<string, string>, method: string): RouteMatch<T> {
  return Object.freeze({ value: pick(route, method), params, allow: route.allow, pattern: route.pattern });
}

/**
 * Where the slashes of the path being matched are: `slashes[i]` starts segment i. Filled by
 * `findSlashes` and read by the same synchronous `match` (never across an await), so one
 * array serves every request instead of a list of segments per request.
 */
let slashes = new Int32Array(16);

/** Record the slashes of `path` from `from` on (its segments: `/a/b` has two), up to `cap` of them (no route has more). */
function findSlashes(path: string, cap: number, from: number): number {
  if (slashes.length < cap) slashes = new Int32Array(cap);
  let count = 0;
  for (let at = path.indexOf('/', from); at !== -1 && count < cap; at = path.indexOf('/', at + 1)) slashes[count++] = at;
  return count;
}

/**
 * Whether `path` (whose slashes were just found: exactly `segments.length` of them) has these
 * segments: a literal equal, a parameter (null) any non-empty segment.
 */
function segmentsMatch(segments: ReadonlyArray<string | null>, path: string): boolean {
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const start = slashes[i]! + 1;
    const end = i === last ? path.length : slashes[i + 1]!;
    const literal = segments[i];
    if (literal === null) {
      if (end === start) return false;
    } else if (end - start !== literal.length || !path.startsWith(literal, start)) {
      return false;
    }
  }
  return true;
}

/**
 * Route parameters: nothing to reach through a prototype chain (no `__proto__` accessor, no
 * `constructor`, like `Object.create(null)`), but made by a constructor, so V8 gives them a
 * fixed shape: `Object.create(null)` made a dictionary per request (about 20 ns and twice
 * the bytes; GET one, issue #16).
 */
class Params {
  [name: string]: string;
}
Object.setPrototypeOf(Params.prototype, null);
delete (Params.prototype as { constructor?: unknown }).constructor;

/** The decoded `:param` values of a path `segmentsMatch` just accepted for this pattern. */
function paramsOf(entry: { segments: ReadonlyArray<string | null>; names: string[] }, path: string, decode: (raw: string) => string): Record<string, string> {
  const params: Record<string, string> = new Params();
  const last = entry.segments.length - 1;
  let name = 0;
  for (let i = 0; i <= last; i++) {
    if (entry.segments[i] !== null) continue;
    params[entry.names[name++]!] = decode(path.slice(slashes[i]! + 1, i === last ? path.length : slashes[i + 1]!));
  }
  return params;
}

/** Segments of a route's path (its slashes: `/a/b` has two). */
function segmentCount(path: string): number {
  return path.split('/').length - 1;
}

function pick<T>(entry: { byMethod: Map<string, T>; any?: T }, method: string): T | undefined {
  const direct = entry.byMethod.get(method);
  if (direct !== undefined) return direct;
  if (method === 'HEAD') {
    const get = entry.byMethod.get('GET');
    if (get !== undefined) return get;
  }
  return entry.any;
}
