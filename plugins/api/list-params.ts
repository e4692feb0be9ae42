import { BadRequestError, ByteBudgetMap } from '../../kernel/index.js';
import { WRITE_METHODS, type ListQuery, type Operator, type OrderClause, type QueryStep, type WhereClause } from '../entries/index.js';
import { parseForm, type FormObject, type FormValue } from '../http/index.js';
// The query language (operators, field names, bounds) is owned by the criteria engine of
// plugins/sources; this file only reads it out of request parameters.
import {
  assertFieldName,
  LIST_OPERATORS,
  MAX_FILTER_VALUE,
  normalizeOperator,
  VALUELESS_OPERATORS as VALUELESS,
} from '../sources/index.js';

const METHOD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INTEGER = /^[0-9]{1,9}$/;

/** Shape a raw filter value for its operator: lists for IN/BETWEEN (a comma string is split), scalars otherwise. */
export function shapeValue(operator: Operator, value: unknown, where: string): unknown {
  if (VALUELESS.has(operator)) return null;
  if (LIST_OPERATORS.has(operator)) {
    const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value];
    for (const item of list) assertScalar(item, where);
    if ((operator === 'BETWEEN' || operator === 'NOT BETWEEN') && list.length !== 2) {
      throw new BadRequestError(`${operator} in ${where} takes exactly two values.`, { parameter: where });
    }
    return list;
  }
  assertScalar(value, where);
  return value;
}

/** Objects as filter values would be operators in some stores ({$ne: ...}): only scalars pass. */
function assertScalar(value: unknown, where: string): void {
  if (value !== null && typeof value === 'object') {
    throw new BadRequestError(`The value of ${where} must be a single value (or a list for IN/BETWEEN).`, { parameter: where });
  }
  // The engine's bound, checked here too so the message names the parameter.
  if (typeof value === 'string' && value.length > MAX_FILTER_VALUE) {
    throw new BadRequestError(`The value of ${where} is longer than ${MAX_FILTER_VALUE} characters.`, { parameter: where });
  }
}

export function parseInteger(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !INTEGER.test(text) || Number(text) < 1) {
    throw new BadRequestError(`The ${name} parameter must be a positive integer.`, { parameter: name });
  }
  return Number(text);
}

export interface Paging {
  page: number;
  perPage: number;
}

export function paging(params: Record<string, unknown>, defaults: { per_page: number; max_per_page: number }, fallback?: Record<string, unknown>): Paging {
  const perPage = parseInteger(params.per_page ?? fallback?.per_page, 'per_page') ?? defaults.per_page;
  const page = parseInteger(params.page ?? fallback?.page, 'page') ?? 1;
  return { page, perPage: Math.min(perPage, defaults.max_per_page) };
}

function asObject(value: FormValue | undefined, name: string): FormObject | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' || Array.isArray(value)) {
    throw new BadRequestError(`The ${name} parameter must be keyed by field: ${name}[field]=...`, { parameter: name });
  }
  return value;
}

function direction(value: FormValue, where: string): 'asc' | 'desc' {
  const text = typeof value === 'string' ? value.toLowerCase() : '';
  if (text !== 'asc' && text !== 'desc') throw new BadRequestError(`The direction in ${where} must be asc or desc.`, { parameter: where });
  return text;
}

/**
 * The entry list's query string: `per_page`, `page`, `where[f]`, `constraint[f]`,
 * `orderBy[f]` / `order_by[f]` (several fields sort in the order given), `with`.
 */
export function parseListQuery(query: string, defaults: { per_page: number; max_per_page: number }): ListQuery {
  const params = parseForm(query);
  const { page, perPage } = paging(params, defaults);
  const where: WhereClause[] = [];
  const wheres = asObject(params.where, 'where');
  const constraints = asObject(params.constraint, 'constraint');
  if (wheres) {
    for (const field of Object.keys(wheres)) {
      const name = `where[${field}]`;
      assertFieldName(field, name);
      const raw = constraints?.[field];
      const operator = raw === undefined ? '=' : normalizeOperator(raw, `constraint[${field}]`);
      where.push({ boolean: 'and', field, operator, value: shapeValue(operator, wheres[field], name) });
    }
  }
  if (constraints) {
    for (const field of Object.keys(constraints)) {
      const name = `constraint[${field}]`;
      assertFieldName(field, name);
      const operator = normalizeOperator(constraints[field], name);
      if (wheres?.[field] !== undefined) continue;
      if (!VALUELESS.has(operator)) throw new BadRequestError(`${name} is given without where[${field}].`, { parameter: name });
      where.push({ boolean: 'and', field, operator, value: null });
    }
  }
  const orderBy: Array<OrderClause & { at: number }> = [];
  // Both spellings may be mixed: the sort keys apply in the order they appear in the URL
  // (only then is the query string scanned again for positions).
  const position = new Map<string, number>();
  if (params.orderBy !== undefined && params.order_by !== undefined) {
    for (const name of new URLSearchParams(query).keys()) if (!position.has(name)) position.set(name, position.size);
  }
  for (const key of ['orderBy', 'order_by'] as const) {
    const order = asObject(params[key], key);
    if (!order) continue;
    for (const field of Object.keys(order)) {
      const name = `${key}[${field}]`;
      assertFieldName(field, name);
      orderBy.push({ field, direction: direction(order[field]!, name), at: position.get(name) ?? orderBy.length });
    }
  }
  orderBy.sort((a, b) => a.at - b.at);
  const result: ListQuery = { where, orderBy: orderBy.map(({ field, direction: d }) => ({ field, direction: d })), page, perPage };
  const relations = withList(params.with);
  if (relations !== undefined) result.with = relations;
  return result;
}

/** Bytes a kept parse may hold in all (per cache), and the longest query string kept. */
const PARSED_BYTES = 256 * 1024;
const PARSED_QUERY_CHARS = 1024;

/**
 * `parseListQuery` of the query strings a list endpoint sees again and again (the pages of a
 * list, a filter a client repeats): a page asked twice is parsed once (issue #33: the parse
 * was ~10% of a cached list page). Results are frozen (the engines only read them) and kept
 * within a byte budget; a query that fails to parse is not kept, so its 400 is made each time.
 */
export class ListQueryCache {
  private readonly parsed = new ByteBudgetMap<string, ListQuery>(PARSED_BYTES);

  constructor(private readonly defaults: { per_page: number; max_per_page: number }) {}

  parse(query: string): ListQuery {
    const known = this.parsed.get(query);
    if (known !== undefined) return known;
    const result = freezeQuery(parseListQuery(query, this.defaults));
    // What a parse holds is about proportional to the text it came from (names and values are
    // slices of it, a few objects per parameter around them).
    if (query.length <= PARSED_QUERY_CHARS) this.parsed.set(query, result, 256 + 8 * query.length);
    return result;
  }
}

function freezeQuery(query: ListQuery): ListQuery {
  for (const clause of query.where) {
    if (Array.isArray(clause.value)) Object.freeze(clause.value);
    Object.freeze(clause);
  }
  for (const clause of query.orderBy) Object.freeze(clause);
  Object.freeze(query.where);
  Object.freeze(query.orderBy);
  if (query.with !== undefined) Object.freeze(query.with);
  return Object.freeze(query);
}

/** `with` of a single-entry GET (the only list parameter it takes); undefined when absent. */
export function parseWith(query: string): string[] | undefined {
  return withList(parseForm(query).with);
}

function withList(raw: FormValue | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined;
  if (!list) throw new BadRequestError('The with parameter must be a comma-separated list of relations.', { parameter: 'with' });
  return list.map((item) => assertFieldName(typeof item === 'string' ? item.trim() : item, 'with'));
}

/** Reject `$`-prefixed keys at any depth (they are operators to MongoDB). */
export function assertNoOperatorKeys(value: unknown, where: string, depth = 0): void {
  if (depth > 64 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) assertNoOperatorKeys(item, where, depth + 1);
    return;
  }
  for (const key of Object.keys(value)) {
    if (key.startsWith('$')) throw new BadRequestError(`The key "${key}" is not allowed in ${where}.`, { parameter: key });
    assertNoOperatorKeys((value as Record<string, unknown>)[key], where, depth + 1);
  }
}

/**
 * The `parameters` array of the query endpoint and of the stream list body: single-key
 * objects `{method: [args...]}`. Write methods are a 400 here already; the entries layer
 * checks its own list of read methods as well.
 */
export function parseSteps(parameters: unknown, where = 'parameters'): QueryStep[] {
  if (parameters === undefined) return [];
  if (!Array.isArray(parameters)) throw new BadRequestError(`${where} must be an array of {method: [arguments]} objects.`, { parameter: where });
  if (parameters.length > 100) throw new BadRequestError(`${where} has too many steps (at most 100).`, { parameter: where });
  return parameters.map((item: unknown, index) => {
    const name = `${where}[${index}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new BadRequestError(`${name} must be an object with one key, the criteria method.`, { parameter: name });
    }
    const keys = Object.keys(item);
    if (keys.length !== 1) throw new BadRequestError(`${name} must have exactly one key, the criteria method.`, { parameter: name });
    const method = keys[0]!;
    if (!METHOD_NAME.test(method)) throw new BadRequestError(`${name}: "${method.slice(0, 40)}" is not a method name.`, { parameter: name });
    if (WRITE_METHODS.has(method)) {
      throw new BadRequestError(`The query endpoint is read-only: "${method}" is not allowed.`, { parameter: name, method });
    }
    const value = (item as Record<string, unknown>)[method];
    const args = Array.isArray(value) ? value : [value];
    assertNoOperatorKeys(args, name);
    return { method, args };
  });
}

/** A `where`-like step's arguments as a clause: [field, value] or [field, operator, value]. */
export function stepToWhere(step: QueryStep, where: string): WhereClause {
  const args = step.args;
  if (args.length < 2 || args.length > 3) throw new BadRequestError(`${where}: ${step.method} takes [field, operator, value] or [field, value].`, { parameter: where });
  const field = assertFieldName(args[0], where);
  const operator = args.length === 3 ? normalizeOperator(args[1], where) : '=';
  const value = shapeValue(operator, args.length === 3 ? args[2] : args[1], where);
  return { boolean: step.method === 'orWhere' ? 'or' : 'and', field, operator, value };
}

export function stepToOrder(step: QueryStep, where: string): OrderClause {
  const [field, dir = 'asc'] = step.args;
  return { field: assertFieldName(field, where), direction: direction(typeof dir === 'string' ? dir : '', where) };
}

/** The query string minus `page`, with `page=N` appended (pagination links keep every other parameter). */
export function withPage(query: string, page: number): string {
  const kept = query.length === 0 ? [] : query.split('&').filter((pair) => pair.length > 0 && pair.split('=', 1)[0] !== 'page');
  kept.push(`page=${page}`);
  return kept.join('&');
}
