import type { Entry, WhereClause } from '../contracts.js';
import { compareKeyParts, keyNumber, sortValue } from './sort-keys.js';
import { getPath, typeRank } from './values.js';

/**
 * Secondary indexes of the in-memory engine (issue #16). An index only ever proposes
 * candidates: a superset of the entries a clause matches. The planner (planner.ts) then
 * runs the reference predicate (criteria/match.ts) on the candidates, so an index can make
 * a query faster but never change its answer.
 */

/** Candidates of one clause: how many (exact or an upper bound) and how to list or test them. */
export interface Candidates {
  size: number;
  list(): Entry[];
  /** Membership without listing (hash indexes): for intersections. */
  has?(entry: Entry): boolean;
}

export interface SecondaryIndex {
  readonly field: string;
  readonly kind: 'hash' | 'sorted';
  add(entry: Entry): void;
  remove(entry: Entry): void;
  /** Candidates for a clause on this field, or undefined when this index cannot answer it. */
  candidates(clause: WhereClause): Candidates | undefined;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * Hash index: value -> entries. An entry is filed under its value when it is a scalar,
 * under `null` when the value is null or missing, and under each scalar element when it
 * is an array (`=` and IN also match an array field holding the value). Objects are not
 * filed: a clause whose value is an object or array is never answered from here.
 */
export class HashIndex implements SecondaryIndex {
  readonly kind = 'hash';
  private readonly buckets = new Map<Scalar | null, Set<Entry>>();

  constructor(readonly field: string) {}

  private keysOf(entry: Entry): Array<Scalar | null> {
    const value = getPath(entry, this.field);
    if (value === null || value === undefined) return [null];
    if (isScalar(value)) return [value];
    if (Array.isArray(value)) return value.filter(isScalar);
    return [];
  }

  clear(): void {
    this.buckets.clear();
  }

  add(entry: Entry): void {
    for (const key of this.keysOf(entry)) {
      let bucket = this.buckets.get(key);
      if (!bucket) this.buckets.set(key, (bucket = new Set()));
      bucket.add(entry);
    }
  }

  remove(entry: Entry): void {
    for (const key of this.keysOf(entry)) {
      const bucket = this.buckets.get(key);
      if (!bucket) continue;
      bucket.delete(entry);
      if (bucket.size === 0) this.buckets.delete(key);
    }
  }

  candidates(clause: WhereClause): Candidates | undefined {
    const { operator, value } = clause;
    if (operator === '=' || operator === 'CONTAINS') {
      // `= null`: null or missing (the null bucket). CONTAINS null needs arrays holding null: not filed.
      if (value === null || value === undefined) return operator === '=' ? this.union([null]) : undefined;
      return isScalar(value) ? this.union([value]) : undefined;
    }
    if (operator === 'IN') {
      const list = Array.isArray(value) ? value : [value];
      // IN (null) also matches arrays holding null, which are not filed.
      if (!list.every(isScalar)) return undefined;
      return this.union(list);
    }
    return undefined;
  }

  private union(keys: Array<Scalar | null>): Candidates {
    const sets: Set<Entry>[] = [];
    for (const key of new Set(keys)) {
      const bucket = this.buckets.get(key);
      if (bucket) sets.push(bucket);
    }
    const size = sets.reduce((n, s) => n + s.size, 0);
    return {
      size,
      list: () => {
        if (sets.length === 1) return [...sets[0]!];
        // An array field can sit in several buckets: list each entry once.
        return [...new Set(sets.flatMap((s) => [...s]))];
      },
      has: (entry) => sets.some((s) => s.has(entry)),
    };
  }
}

/** One entry in a sorted index: its value's type bracket and comparable value, its key parts. */
interface SortedRow {
  e: Entry;
  r: number;
  v: number | string;
  kn: number;
  ks: string;
}

function compareRows(a: SortedRow, b: SortedRow): number {
  if (a.r !== b.r) return a.r - b.r;
  if (a.v !== b.v) return a.v < b.v ? -1 : 1;
  return compareKeyParts(a.kn, a.ks, b.kn, b.ks);
}

/**
 * Sorted index: every entry ordered by the field's value (sort order of compareValues),
 * ties in key order. Answers ranges (<, <=, >, >=, BETWEEN: only same-type scalars match,
 * which are one contiguous run) and gives any page of `orderBy field` without sorting.
 */
export class SortedIndex implements SecondaryIndex {
  readonly kind = 'sorted';
  private rows: SortedRow[] = [];

  constructor(
    readonly field: string,
    private readonly keyName: string,
  ) {}

  private rowOf(entry: Entry): SortedRow {
    const value = getPath(entry, this.field);
    const r = typeRank(value);
    const key = entry[this.keyName];
    return { e: entry, r, v: sortValue(value, r), kn: keyNumber(key), ks: String(key) };
  }

  /** Build from scratch (load): one decoration per entry and one sort. */
  build(entries: readonly Entry[]): void {
    this.rows = entries.map((e) => this.rowOf(e)).sort(compareRows);
  }

  private position(row: SortedRow): { at: number; found: boolean } {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareRows(this.rows[mid]!, row);
      if (c === 0) return { at: mid, found: true };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return { at: lo, found: false };
  }

  add(entry: Entry): void {
    const row = this.rowOf(entry);
    const { at, found } = this.position(row);
    if (found) this.rows[at] = row;
    else this.rows.splice(at, 0, row);
  }

  remove(entry: Entry): void {
    const { at, found } = this.position(this.rowOf(entry));
    if (found && this.rows[at]!.e === entry) this.rows.splice(at, 1);
  }

  get size(): number {
    return this.rows.length;
  }

  /** First row index whose (rank, value) is >= (or with `after`, >) the given one. */
  private bound(r: number, v: number | string, after: boolean): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const row = this.rows[mid]!;
      const c = row.r !== r ? row.r - r : row.v === v ? 0 : row.v < v ? -1 : 1;
      if (c < 0 || (after && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  candidates(clause: WhereClause): Candidates | undefined {
    const { operator, value } = clause;
    let from: number;
    let to: number;
    const typed = (x: unknown): [number, number | string] | undefined => {
      if (!isScalar(x)) return undefined;
      const r = typeRank(x);
      return [r, sortValue(x, r)];
    };
    switch (operator) {
      case '<':
      case '<=':
      case '>':
      case '>=': {
        // Comparisons only match same-type scalars; null or an object matches nothing.
        const t = typed(value);
        if (!t) return { size: 0, list: () => [] };
        const [r, v] = t;
        const start = this.bound(r, r === 5 ? 0 : typeof v === 'number' ? -Infinity : '', false);
        const end = this.bound(r + 1, -Infinity, false);
        if (operator === '<') [from, to] = [start, this.bound(r, v, false)];
        else if (operator === '<=') [from, to] = [start, this.bound(r, v, true)];
        else if (operator === '>') [from, to] = [this.bound(r, v, true), end];
        else [from, to] = [this.bound(r, v, false), end];
        break;
      }
      case 'BETWEEN': {
        const [low, high] = Array.isArray(value) ? value : [value, value];
        const lo = typed(low);
        const hi = typed(high);
        // Both bounds must have the stored value's type; mixed types match nothing.
        if (!lo || !hi || lo[0] !== hi[0]) return { size: 0, list: () => [] };
        [from, to] = [this.bound(lo[0], lo[1], false), this.bound(hi[0], hi[1], true)];
        break;
      }
      default:
        return undefined;
    }
    const rows = this.rows;
    const size = Math.max(0, to - from);
    return {
      size,
      list: () => {
        const out = new Array<Entry>(size);
        for (let i = 0; i < size; i++) out[i] = rows[from + i]!.e;
        return out;
      },
    };
  }

  /**
   * Entries `skip` .. `skip + limit` of `orderBy [field asc|desc]` (ties in key order in
   * both directions, as compareEntries), without sorting: a walk of the index.
   */
  page(direction: 'asc' | 'desc', skip: number, limit: number): Entry[] {
    const rows = this.rows;
    const out: Entry[] = [];
    if (direction === 'asc') {
      for (let i = skip; i < rows.length && out.length < limit; i++) out.push(rows[i]!.e);
      return out;
    }
    // Descending by value, but equal values stay in ascending key order: walk runs of equal
    // values from the end, each run forwards.
    let seen = 0;
    let end = rows.length;
    while (end > 0 && out.length < limit) {
      let start = end - 1;
      const last = rows[start]!;
      while (start > 0 && rows[start - 1]!.r === last.r && rows[start - 1]!.v === last.v) start--;
      const run = end - start;
      if (seen + run <= skip) {
        seen += run;
      } else {
        for (let i = start + Math.max(0, skip - seen); i < end && out.length < limit; i++) out.push(rows[i]!.e);
        seen += run;
      }
      end = start;
    }
    return out;
  }
}
