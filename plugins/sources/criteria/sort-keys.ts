import { numericKeyValue } from '../../streams/index.js';
import type { Entry, OrderClause } from '../contracts.js';
import { compareKeys, ownReader, typeRank } from './values.js';

/**
 * Precomputed, typed sort keys (issue #16): each entry's sort values are read once per
 * sort, not once per comparison, and compared as plain numbers or strings. The order is
 * exactly `compareEntries` (criteria/order.ts): MongoDB's type brackets, then the value,
 * ties in key order.
 */

/** One entry decorated with its sort values: `k` holds [rank, value] per clause. */
export interface SortRow {
  e: Entry;
  k: Array<number | string>;
  /** The key as a number when it is numeric (key order: numeric keys first), else NaN. */
  kn: number;
  /** The key as stored (compared by compareKeys when the numbers do not decide). */
  key: unknown;
}

/** The value a sort compares within its type bracket (compareValues: `<` on scalars, JSON otherwise). */
export function sortValue(value: unknown, rank: number): number | string {
  switch (rank) {
    case 0:
      return 0;
    case 1:
      return Number(value);
    case 2:
      return value as string;
    case 5:
      return value ? 1 : 0;
    default:
      return JSON.stringify(value);
  }
}

export function keyNumber(key: unknown): number {
  return numericKeyValue(key) ?? NaN;
}

/** Key order (compareKeys) on precomputed parts. */
export function compareKeyParts(an: number, as: string, bn: number, bs: string): number {
  const na = an === an;
  const nb = bn === bn;
  if (na && nb) {
    if (an !== bn) return an - bn;
  } else if (na) return -1;
  else if (nb) return 1;
  return as < bs ? -1 : as > bs ? 1 : 0;
}

/** Decorates and compares entries for one `orderBy`. */
export class SortKeys {
  private readonly readers: Array<(entry: Entry) => unknown>;
  private readonly signs: number[];
  private readonly readKey: (entry: Entry) => unknown;

  constructor(orderBy: readonly OrderClause[], keyName: string) {
    this.readers = orderBy.map((c) => ownReader(c.field));
    this.signs = orderBy.map((c) => (c.direction === 'desc' ? -1 : 1));
    this.readKey = ownReader(keyName);
  }

  /** Fill `row` with the sort values of `entry` (rows are reused by `top`). */
  private fill(row: SortRow, entry: Entry): SortRow {
    const k = row.k;
    for (let i = 0; i < this.readers.length; i++) {
      const value = this.readers[i]!(entry);
      const rank = typeRank(value);
      k[2 * i] = rank;
      k[2 * i + 1] = sortValue(value, rank);
    }
    const key = this.readKey(entry);
    row.e = entry;
    row.key = key;
    row.kn = typeof key === 'number' ? key : keyNumber(key);
    return row;
  }

  row(entry: Entry): SortRow {
    return this.fill({ e: entry, k: new Array<number | string>(this.readers.length * 2), kn: 0, key: undefined }, entry);
  }

  readonly compare = (a: SortRow, b: SortRow): number => {
    const ak = a.k;
    const bk = b.k;
    for (let i = 0; i < this.signs.length; i++) {
      const ra = ak[2 * i] as number;
      const rb = bk[2 * i] as number;
      if (ra !== rb) return (ra - rb) * this.signs[i]!;
      const va = ak[2 * i + 1]!;
      const vb = bk[2 * i + 1]!;
      if (va !== vb) return (va < vb ? -1 : 1) * this.signs[i]!;
    }
    const an = a.kn;
    const bn = b.kn;
    if (an === an && bn === bn && an !== bn) return an - bn;
    return compareKeys(a.key, b.key);
  };

  /** Every entry in this order (one decoration per entry, then a sort of the rows). */
  sortAll(entries: readonly Entry[]): Entry[] {
    const rows = new Array<SortRow>(entries.length);
    for (let i = 0; i < entries.length; i++) rows[i] = this.row(entries[i]!);
    rows.sort(this.compare);
    const out = new Array<Entry>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = rows[i]!.e;
    return out;
  }

  /**
   * The first `count` entries in this order without sorting the rest: a bounded max-heap
   * of the best rows seen (O(n log count)), then a sort of those.
   */
  top(entries: readonly Entry[], count: number): Entry[] {
    if (count <= 0) return [];
    if (count >= entries.length) return this.sortAll(entries);
    const heap: SortRow[] = [];
    const cmp = this.compare;
    // One spare row is filled per entry; it enters the heap only when it beats the worst
    // kept row, whose object becomes the next spare (no allocation per entry).
    let spare = this.row(entries[0]!);
    // Once the heap is full most entries lose to its worst row on the first sort value alone:
    // that test reads one value and needs no row (about 3x fewer instructions per entry).
    const first = this.readers[0];
    const sign = this.signs[0] ?? 1;
    for (let i = 0; i < entries.length; i++) {
      if (first !== undefined && heap.length === count) {
        const value = first(entries[i]!);
        const rank = typeRank(value);
        const worst = heap[0]!.k;
        const byRank = (rank - (worst[0] as number)) * sign;
        if (byRank > 0) continue;
        if (byRank === 0) {
          const v = sortValue(value, rank);
          const w = worst[1]!;
          if (v !== w && (v < w ? -sign : sign) > 0) continue;
        }
      }
      const row = this.fill(spare, entries[i]!);
      if (heap.length < count) {
        heap.push(row);
        siftUp(heap, heap.length - 1, cmp);
        spare = this.row(entries[0]!);
      } else if (cmp(row, heap[0]!) < 0) {
        spare = heap[0]!;
        heap[0] = row;
        siftDown(heap, 0, cmp);
      }
    }
    heap.sort(cmp);
    return heap.map((r) => r.e);
  }
}

/** Max-heap on `cmp` (the worst kept row on top). */
function siftUp(heap: SortRow[], at: number, cmp: (a: SortRow, b: SortRow) => number): void {
  const row = heap[at]!;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (cmp(heap[parent]!, row) >= 0) break;
    heap[at] = heap[parent]!;
    at = parent;
  }
  heap[at] = row;
}

function siftDown(heap: SortRow[], at: number, cmp: (a: SortRow, b: SortRow) => number): void {
  const n = heap.length;
  const row = heap[at]!;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && cmp(heap[child + 1]!, heap[child]!) > 0) child++;
    if (cmp(heap[child]!, row) <= 0) break;
    heap[at] = heap[child]!;
    at = child;
  }
  heap[at] = row;
}
