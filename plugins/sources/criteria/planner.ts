import type { Entry, WhereClause } from '../contracts.js';
import type { Candidates, SecondaryIndex } from './indexes.js';

/**
 * The query planner of the in-memory engine (issue #16): which entries to run the
 * reference predicate on. Clauses group as in compileWhere (AND binds tighter than OR).
 * Per AND group it takes the most selective clause an index can answer, intersects it
 * with the next one when that is a hash lookup, and unions the groups. When a group has
 * no usable index, or the candidates are most of the stream, it scans (undefined).
 */

/** Where the candidates of a clause on `field` come from (indexes, and the key map). */
export type CandidateSource = (clause: WhereClause) => Candidates | undefined;

export interface Plan {
  /** The entries to test with the full predicate; not in any particular order. */
  candidates: Entry[];
  /** What was used, for tests and logs: `index:<field>` per group, `+<field>` for an intersection. */
  explain: string[];
}

/** Above this share of the stream a scan in key order is as cheap and needs no re-ordering. */
const SCAN_SHARE = 0.5;

function groupsOf(where: readonly WhereClause[]): WhereClause[][] {
  const groups: WhereClause[][] = [[]];
  where.forEach((clause, index) => {
    if (index > 0 && clause.boolean === 'or') groups.push([]);
    groups[groups.length - 1]!.push(clause);
  });
  return groups;
}

export function plan(where: readonly WhereClause[], total: number, source: CandidateSource): Plan | undefined {
  if (where.length === 0 || total === 0) return undefined;
  const picked: Array<{ entries: Entry[]; explain: string }> = [];
  let size = 0;
  for (const group of groupsOf(where)) {
    const options: Array<{ clause: WhereClause; c: Candidates }> = [];
    for (const clause of group) {
      const c = source(clause);
      if (c) options.push({ clause, c });
    }
    if (options.length === 0) return undefined;
    options.sort((a, b) => a.c.size - b.c.size);
    const best = options[0]!;
    size += best.c.size;
    if (size > total * SCAN_SHARE) return undefined;
    let entries = best.c.list();
    let explain = `index:${best.clause.field}`;
    // Intersect with the next hash lookup when the best list is not already tiny.
    const next = options.find((o, i) => i > 0 && o.c.has !== undefined);
    if (next && entries.length > 64) {
      const has = next.c.has!;
      entries = entries.filter((e) => has(e));
      explain += `+${next.clause.field}`;
    }
    picked.push({ entries, explain });
  }
  if (picked.length === 1) return { candidates: picked[0]!.entries, explain: [picked[0]!.explain] };
  const union = new Set<Entry>();
  for (const p of picked) for (const e of p.entries) union.add(e);
  return { candidates: [...union], explain: picked.map((p) => p.explain) };
}

export type { SecondaryIndex };
