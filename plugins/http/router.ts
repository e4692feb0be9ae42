/**
 * A small path router shared by the transport (top-level routes) and the API (its
 * endpoints under an interface prefix). Exact paths are one Map lookup; parameter
 * patterns are compared segment by segment; prefix patterns (`/api/*`) are tried
 * longest first. It knows every method of a path so that it can answer 405 + Allow.
 */

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

interface PrefixEntry<T> {
  pattern: string;
  /** The prefix without the trailing `*`, e.g. `/api/` (or `/` for `/*`). */
  prefix: string;
  /** The prefix without its trailing slash: `/api` also matches the prefix route. */
  bare: string;
  byMethod: Map<string, T>;
  any?: T;
  allow: string[];
}

const NO_PARAMS: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

function computeAllow(byMethod: Map<string, unknown>, any: unknown): string[] {
  if (any !== undefined) return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  const methods = new Set(byMethod.keys());
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods];
}

export class Router<T> {
  private readonly exact = new Map<string, PatternEntry<T>>();
  private readonly patterns: PatternEntry<T>[] = [];
  private readonly prefixes: PrefixEntry<T>[] = [];

  /** `method`: a method, a list of methods, or `*`. */
  add(method: string | string[], pattern: string, value: T): void {
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with "/": ${pattern}`);
    const methods = Array.isArray(method) ? method : [method];
    if (pattern === '/*' || pattern.endsWith('/*')) {
      const prefix = pattern.slice(0, -1);
      let entry = this.prefixes.find((p) => p.pattern === pattern);
      if (!entry) {
        entry = { pattern, prefix, bare: prefix.length > 1 ? prefix.slice(0, -1) : '/', byMethod: new Map(), allow: [] };
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
   */
  match(method: string, path: string, decode: (raw: string) => string = decodeURIComponent): RouteMatch<T> | undefined {
    const exact = this.exact.get(path);
    if (exact) return { value: pick(exact, method), params: NO_PARAMS, allow: exact.allow, pattern: exact.pattern };
    if (this.patterns.length > 0) {
      const parts = path.split('/');
      for (const entry of this.patterns) {
        const segments = entry.segments;
        if (parts.length - 1 !== segments.length) continue;
        let ok = true;
        for (let i = 0; i < segments.length; i++) {
          const literal = segments[i];
          const part = parts[i + 1]!;
          if (literal === null ? part.length === 0 : literal !== part) {
            ok = false;
            break;
          }
        }
        if (!ok) continue;
        const params = Object.create(null) as Record<string, string>;
        let n = 0;
        for (let i = 0; i < segments.length; i++) {
          if (segments[i] === null) params[entry.names[n++]!] = decode(parts[i + 1]!);
        }
        return { value: pick(entry, method), params, allow: entry.allow, pattern: entry.pattern };
      }
    }
    for (const entry of this.prefixes) {
      if (path.startsWith(entry.prefix) || path === entry.bare) {
        return { value: pick(entry, method), params: NO_PARAMS, allow: entry.allow, pattern: entry.pattern };
      }
    }
    return undefined;
  }
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
