import { BadRequestError } from '../../kernel/index.js';
import type { OrderClause, QueryStep, WhereClause } from '../entries/index.js';
import { compileLike } from '../sources/index.js';
import { stepToOrder, stepToWhere } from './list-params.js';

/**
 * The stream list's optional body `{parameters: [{where: [field, op, value]}, {order_by: [field, dir]}]}`,
 * applied in memory to the definitions (a handful of objects; no source involved).
 * Semantics follow decisions.md: LIKE is SQL-like, anchored and case-insensitive.
 */

function getPath(item: Record<string, unknown>, field: string): unknown {
  let value: unknown = item;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'number' || typeof a === 'boolean') && typeof b === 'string') return String(a) === b;
  if ((typeof b === 'number' || typeof b === 'boolean') && typeof a === 'string') return String(b) === a;
  return false;
}

function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'string' && b.trim() !== '' && !Number.isNaN(Number(b))) return a - Number(b);
  return undefined;
}

function test(clause: WhereClause, item: Record<string, unknown>): boolean {
  const actual = getPath(item, clause.field);
  const value = clause.value;
  const list = Array.isArray(value) ? value : [value];
  switch (clause.operator) {
    case '=': return Array.isArray(actual) ? actual.some((a) => equal(a, value)) : value === null ? actual == null : equal(actual, value);
    case '!=': return !test({ ...clause, operator: '=' }, item);
    case '<': { const c = compare(actual, value); return c !== undefined && c < 0; }
    case '<=': { const c = compare(actual, value); return c !== undefined && c <= 0; }
    case '>': { const c = compare(actual, value); return c !== undefined && c > 0; }
    case '>=': { const c = compare(actual, value); return c !== undefined && c >= 0; }
    case 'LIKE': { const like = compileLike(String(value)); return Array.isArray(actual) ? actual.some((a) => typeof a === 'string' && like(a)) : typeof actual === 'string' && like(actual); }
    case 'NOT LIKE': return !test({ ...clause, operator: 'LIKE' }, item);
    case 'IN': return Array.isArray(actual) ? actual.some((a) => list.some((v) => equal(a, v))) : list.some((v) => equal(actual, v));
    case 'NOT IN': return !test({ ...clause, operator: 'IN' }, item);
    case 'BETWEEN': { const lo = compare(actual, list[0]); const hi = compare(actual, list[1]); return lo !== undefined && hi !== undefined && lo >= 0 && hi <= 0; }
    case 'NOT BETWEEN': return !test({ ...clause, operator: 'BETWEEN' }, item);
    case 'NULL': return actual == null;
    case 'NOT NULL': return actual != null;
    case 'CONTAINS': return Array.isArray(actual) && actual.some((a) => equal(a, value));
    default: return false;
  }
}

/** AND binds tighter than OR: `a AND b OR c` is `(a AND b) OR c`. */
function matches(where: WhereClause[], item: Record<string, unknown>): boolean {
  if (where.length === 0) return true;
  let group = true;
  for (let i = 0; i < where.length; i++) {
    const clause = where[i]!;
    if (i > 0 && clause.boolean === 'or') {
      if (group) return true;
      group = true;
    }
    if (group && !test(clause, item)) group = false;
  }
  return group;
}

function rank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  if (typeof v === 'object') return Array.isArray(v) ? 4 : 3;
  return 5;
}

function sortValue(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  return compare(a, b) ?? 0;
}

export function filterDefinitions(items: Array<Record<string, unknown>>, steps: QueryStep[]): Array<Record<string, unknown>> {
  const where: WhereClause[] = [];
  const order: OrderClause[] = [];
  steps.forEach((step, index) => {
    const name = `parameters[${index}]`;
    if (step.method === 'where' || step.method === 'orWhere') where.push(stepToWhere(step, name));
    else if (step.method === 'orderBy' || step.method === 'order_by') order.push(stepToOrder(step, name));
    else throw new BadRequestError(`${name}: "${step.method}" is not supported on the stream list (use where, orWhere, order_by).`, { parameter: name });
  });
  const result = where.length > 0 ? items.filter((item) => matches(where, item)) : items;
  if (order.length > 0) {
    result.sort((a, b) => {
      for (const { field, direction } of order) {
        const c = sortValue(getPath(a, field), getPath(b, field));
        if (c !== 0) return direction === 'asc' ? c : -c;
      }
      return 0;
    });
  }
  return result;
}
