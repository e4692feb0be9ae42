import type { Entry, OrderClause } from '../contracts.js';
import { compareKeys, compareValues, getPath } from './values.js';

export type EntryComparator = (a: Entry, b: Entry) => number;

/**
 * Comparator for `orderBy` clauses in the order given; ties fall back to key order so
 * every source returns equal entries in the same order.
 */
export function compareEntries(orderBy: readonly OrderClause[], keyName: string): EntryComparator {
  const byKey = (a: Entry, b: Entry): number => compareKeys(a[keyName], b[keyName]);
  if (orderBy.length === 0) return byKey;
  const clauses = orderBy.map((c) => ({ field: c.field, sign: c.direction === 'desc' ? -1 : 1 }));
  return (a, b) => {
    for (const { field, sign } of clauses) {
      const c = compareValues(getPath(a, field), getPath(b, field));
      if (c !== 0) return c * sign;
    }
    return byKey(a, b);
  };
}

/** A stable text signature of a sort (cache key for sorted orders). */
export function orderSignature(orderBy: readonly OrderClause[]): string {
  return orderBy.map((c) => `${c.field}:${c.direction}`).join(',');
}
