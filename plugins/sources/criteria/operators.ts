import { BadRequestError } from '../../../kernel/index.js';
import type { Operator, WhereClause } from '../contracts.js';

/** Every accepted spelling (upper-cased, inner spaces collapsed) and its canonical form. */
const OPERATORS: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ['=', '='],
  ['==', '='],
  ['!=', '!='],
  ['<>', '!='],
  ['<', '<'],
  ['<=', '<='],
  ['>', '>'],
  ['>=', '>='],
  ['LIKE', 'LIKE'],
  ['NOT LIKE', 'NOT LIKE'],
  ['IN', 'IN'],
  ['NOT IN', 'NOT IN'],
  ['BETWEEN', 'BETWEEN'],
  ['NOT BETWEEN', 'NOT BETWEEN'],
  ['NULL', 'NULL'],
  ['NOT NULL', 'NOT NULL'],
  ['CONTAINS', 'CONTAINS'],
]);

/** Operators whose value is a list (an array, or a comma-separated string that is split). */
export const LIST_OPERATORS: ReadonlySet<Operator> = new Set<Operator>(['IN', 'NOT IN', 'BETWEEN', 'NOT BETWEEN']);
/** Operators that take no value. */
export const VALUELESS_OPERATORS: ReadonlySet<Operator> = new Set<Operator>(['NULL', 'NOT NULL']);

/** Field names allowed in filters and sorts (decisions.md): never `$...`, never odd characters. */
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;
const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

export function isOperator(value: string): boolean {
  return OPERATORS.has(value.trim().replace(/\s+/g, ' ').toUpperCase());
}

/** Every accepted spelling, for messages. */
export const OPERATOR_SPELLINGS: readonly string[] = [...OPERATORS.keys()];

/**
 * Canonical operator for a name given in any case (`like`, `Not In`, `<>`), or a 400.
 * `parameter`: the request parameter it came from, named in the message and the meta.
 */
export function normalizeOperator(value: unknown, parameter?: string): Operator {
  const at = parameter === undefined ? '' : ` in ${parameter}`;
  const meta = parameter === undefined ? { rule: 'operator' } : { parameter };
  if (typeof value !== 'string') throw new BadRequestError(`The filter operator${at} must be a string.`, meta);
  const canonical = OPERATORS.get(value.trim().replace(/\s+/g, ' ').toUpperCase());
  if (!canonical) {
    throw new BadRequestError(`Unknown filter operator "${value.slice(0, 30)}"${at}. Use one of: ${OPERATOR_SPELLINGS.join(', ')}.`, meta);
  }
  return canonical;
}

/**
 * Check a field name used in a filter, a sort or `with` (400 when it could reach a path, a
 * prototype or a query operator). `parameter`: as for normalizeOperator.
 */
export function assertFieldName(field: unknown, parameter?: string): string {
  if (typeof field !== 'string' || !FIELD_NAME.test(field) || field.split('.').some((s) => s === '' || FORBIDDEN_SEGMENTS.has(s))) {
    const shown = String(field).slice(0, 60);
    if (parameter === undefined) throw new BadRequestError(`Invalid field name "${shown}".`, { rule: 'field' });
    throw new BadRequestError(`Invalid field name "${shown}" in ${parameter}: it must match ${FIELD_NAME.source}, without __proto__, constructor or prototype.`, { parameter });
  }
  return field;
}

/** The value list of IN/NOT IN/BETWEEN: arrays as given, strings split on commas. */
export function listValue(operator: Operator, value: unknown): unknown[] {
  let list: unknown[];
  if (Array.isArray(value)) list = value;
  else if (typeof value === 'string') list = value === '' ? [] : value.split(',').map((s) => s.trim());
  else list = [value];
  if ((operator === 'BETWEEN' || operator === 'NOT BETWEEN') && list.length !== 2) {
    throw new BadRequestError(`${operator} needs exactly two values.`, { rule: 'operator' });
  }
  return list;
}

/** The longest filter value (a LIKE pattern included) and the most values of a list operator. */
export const MAX_FILTER_VALUE = 1024;
export const MAX_FILTER_LIST = 1000;

/** Filter values are bounded: a huge one would cost time to match and memory to cache (issue #13). */
function assertBounded(value: unknown): void {
  if (typeof value === 'string' && value.length > MAX_FILTER_VALUE) {
    throw new BadRequestError(`A filter value is longer than ${MAX_FILTER_VALUE} characters.`, { rule: 'operator' });
  }
}

/**
 * Build a clean clause from raw parts (API, query endpoint, addons): checked field
 * name, canonical operator, list values split, each value passed through `cast`
 * (the field type's `castFilter`). Throws BadRequestError on bad input.
 */
export function normalizeWhere(
  field: unknown,
  operator: unknown,
  value: unknown,
  boolean: 'and' | 'or' = 'and',
  cast: (value: unknown) => unknown = (v) => v,
): WhereClause {
  const name = assertFieldName(field);
  const op = normalizeOperator(operator);
  let clean: unknown;
  if (VALUELESS_OPERATORS.has(op)) clean = null;
  else if (LIST_OPERATORS.has(op)) {
    const list = listValue(op, value);
    if (list.length > MAX_FILTER_LIST) throw new BadRequestError(`${op} takes at most ${MAX_FILTER_LIST} values.`, { rule: 'operator' });
    list.forEach(assertBounded);
    clean = list.map((v) => cast(v));
  } else {
    assertBounded(value);
    clean = value === null ? null : cast(value);
  }
  return { boolean, field: name, operator: op, value: clean };
}
