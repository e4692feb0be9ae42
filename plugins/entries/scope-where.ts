import { BadRequestError } from '../../kernel/index.js';
import type { WhereClause } from '../sources/index.js';

/** OR groups of one filter, each a list of AND-ed clauses (AND binds tighter than OR, as in the criteria engine). */
function groupsOf(clauses: readonly WhereClause[]): WhereClause[][] {
  const groups: WhereClause[][] = [];
  for (const [index, clause] of clauses.entries()) {
    if (index === 0 || clause.boolean === 'or') groups.push([]);
    groups[groups.length - 1]!.push(clause);
  }
  return groups;
}

/** A caller's filter and an access rule both hold on their product at most this many OR groups (a bigger one is a 400, never a slow scan). */
export const MAX_GROUPS = 256;

/**
 * `a AND b` in the flat language of the list endpoint (OR of AND groups): every group of
 * `a` joined with every group of `b`. An access rule's row filter is put under the caller's
 * own filter this way (issue #28), so the sources, their indexes and their match caches
 * see one ordinary filter (and cache it under its full text: the rule that applied).
 */
export function andWhere(a: readonly WhereClause[], b: readonly WhereClause[] | undefined): WhereClause[] {
  if (b === undefined || b.length === 0) return [...a];
  if (a.length === 0) return [...b];
  const left = groupsOf(a);
  const right = groupsOf(b);
  if (left.length * right.length > MAX_GROUPS) throw new BadRequestError(`The filter has too many "or" groups under the access rule (at most ${MAX_GROUPS}).`);
  const out: WhereClause[] = [];
  for (const l of left) {
    for (const r of right) {
      const group = [...l, ...r];
      group.forEach((clause, index) => out.push({ ...clause, boolean: index === 0 && out.length > 0 ? 'or' : 'and' }));
    }
  }
  return out;
}
