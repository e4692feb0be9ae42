import type { Document, Filter, Sort } from 'mongodb';
import { BadRequestError } from '../../kernel/index.js';
import { assertFieldName, likePatternBody, type OrderClause, type WhereClause } from '../sources/index.js';
import { KEY_ORDER_FIELD, RESERVED_FIELDS } from './documents.js';
import { requireList, requireScalar, type Scalar } from './values.js';

/**
 * Criteria (WhereClause[] / OrderClause[], values already cast by the entries layer)
 * to a MongoDB filter and sort with exactly the semantics of the in-memory engine
 * (`WhereClause` in plugins/sources/contracts.ts). MongoDB's own matching differs from
 * that reference in a few places, each neutralized here:
 * - comparisons, BETWEEN and `= null`/NULL look inside arrays in MongoDB; the reference
 *   does not, so those predicates add `$not: {$type: "array"}`.
 * - a dotted path walks through arrays of sub-documents in MongoDB; the reference reads
 *   such a path as missing, so every intermediate segment is guarded (see `guarded`).
 * - negations (`!=`, NOT LIKE, NOT IN, NOT BETWEEN, NOT NULL) are written as
 *   `$nor: [positive]`, i.e. exactly "not what the positive operator selects".
 * - LIKE ends with `(?![\s\S])`, not `$`: in PCRE (the server) `$` also matches before
 *   a trailing newline.
 * Only scalars (string, finite number, boolean, null) or lists of scalars are ever put
 * in a filter: an object where a value is expected (`{"$gt": ""}`) is a 400, so a
 * request can never inject an operator.
 */

const IS_ARRAY = { $type: 'array' } as const;
/** Matches no document (every stored document has an `_id`). */
const NEVER: Filter<Document> = { _id: { $exists: false } };

/** The document path of a field: the stream key is stored as `_id`. */
export function fieldPath(keyName: string, field: string): string {
  const name = assertFieldName(field);
  if (name === keyName) return '_id';
  // Storage columns (`_id`, `_ko`, `_rev`) are not attributes: filtering or sorting on
  // them would expose (and depend on) how entries are stored.
  const head = name.split('.')[0]!;
  if (RESERVED_FIELDS.has(head) && head !== keyName) {
    throw new BadRequestError(`The field "${head}" is internal to the database source and cannot be filtered or sorted on.`, { field: name, rule: 'field' });
  }
  if (name.startsWith(`${keyName}.`)) return `_id${name.slice(keyName.length)}`;
  return name;
}

/**
 * SQL LIKE to an anchored regular expression source for the server. It ends with
 * `(?![\s\S])`, not `$`: in PCRE `$` also matches before a trailing newline. Use with
 * the options `is`.
 */
export function likeToRegexSource(pattern: string): string {
  return `^${likePatternBody(pattern)}(?![\\s\\S])`;
}

export const LIKE_OPTIONS = 'is';

/**
 * The prefixes of a dotted path that must not be arrays for MongoDB to read the path
 * the way the reference does (own properties of nested objects; a numeric segment
 * indexes into an array in both).
 */
function arrayGuards(path: string): Filter<Document>[] {
  const segments = path.split('.');
  const guards: Filter<Document>[] = [];
  for (let i = 1; i < segments.length; i++) {
    if (/^\d+$/.test(segments[i]!)) continue;
    guards.push({ [segments.slice(0, i).join('.')]: { $not: IS_ARRAY } });
  }
  return guards;
}

/**
 * A positive predicate on `path`, made exact for dotted paths: where MongoDB would walk
 * through an array, the reference sees a missing value, so the predicate holds there
 * only when it also holds for a missing value.
 */
function guarded(path: string, predicate: Filter<Document>, matchesMissing: boolean): Filter<Document> {
  const guards = arrayGuards(path);
  if (guards.length === 0) return predicate;
  const walkable = guards.length === 1 ? guards[0]! : { $and: guards };
  return matchesMissing ? { $or: [predicate, { $nor: [walkable] }] } : { $and: [...guards, predicate] };
}

function not(predicate: Filter<Document>): Filter<Document> {
  return { $nor: [predicate] };
}

/** Null or missing, never an array holding null (reference `= null` and NULL). */
function isNull(path: string): Filter<Document> {
  return guarded(path, { [path]: { $eq: null, $not: IS_ARRAY } }, true);
}

/** The value itself, or an element of an array field (MongoDB's own `$eq`). */
function equals(path: string, value: Scalar): Filter<Document> {
  if (value === null) return isNull(path);
  return guarded(path, { [path]: { $eq: value } }, false);
}

function comparable(value: Scalar): value is string | number | boolean {
  return value !== null;
}

/**
 * The server runs LIKE as a PCRE2 regex, a backtracking engine: `%` runs are `.*`, and k
 * of them can cost up to n^k steps on an n-character value. Patterns are capped (and
 * every query carries maxTimeMS), so no request can hold the server.
 */
export const MAX_LIKE_LENGTH = 256;
export const MAX_LIKE_WILDCARDS = 16;

function requireLikePattern(pattern: string, field: string): string {
  if (pattern.length > MAX_LIKE_LENGTH) {
    throw new BadRequestError(`The LIKE pattern for [${field}] must be at most ${MAX_LIKE_LENGTH} characters on a database stream.`, { field, rule: 'filter' });
  }
  const runs = pattern.replace(/\\[\s\S]/g, '').match(/%+/g)?.length ?? 0;
  if (runs > MAX_LIKE_WILDCARDS) {
    throw new BadRequestError(`The LIKE pattern for [${field}] may hold at most ${MAX_LIKE_WILDCARDS} runs of % on a database stream.`, { field, rule: 'filter' });
  }
  return pattern;
}

function like(path: string, value: unknown, field: string, operator: string): Filter<Document> {
  const scalar = value === undefined ? null : requireScalar(value, field, operator);
  const pattern = requireLikePattern(scalar === null ? '' : String(scalar), field);
  return guarded(path, { [path]: { $regex: likeToRegexSource(pattern), $options: LIKE_OPTIONS } }, false);
}

/** `$in` is the reference IN (the value, or an element of an array field; null also matches missing). */
function inList(path: string, values: Scalar[]): Filter<Document> {
  return guarded(path, { [path]: { $in: values } }, values.includes(null));
}

function between(path: string, low: Scalar, high: Scalar): Filter<Document> {
  // Null bounds compare with nothing in the reference.
  if (!comparable(low) || !comparable(high)) return NEVER;
  return guarded(path, { [path]: { $gte: low, $lte: high, $not: IS_ARRAY } }, false);
}

const COMPARISONS: Record<string, '$lt' | '$lte' | '$gt' | '$gte'> = { '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' };

/** One clause to one predicate document. */
export function translateClause(clause: WhereClause, keyName: string): Filter<Document> {
  const field = assertFieldName(clause.field);
  const path = fieldPath(keyName, field);
  const operator = String(clause.operator).toUpperCase();
  const scalar = (): Scalar => (clause.value === undefined ? null : requireScalar(clause.value, field, operator));
  switch (operator) {
    case '=':
    case '==':
      return equals(path, scalar());
    case '!=':
    case '<>':
      return not(equals(path, scalar()));
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const value = scalar();
      if (!comparable(value)) return NEVER;
      return guarded(path, { [path]: { [COMPARISONS[operator]!]: value, $not: IS_ARRAY } }, false);
    }
    case 'LIKE':
      return like(path, clause.value, field, operator);
    case 'NOT LIKE':
      return not(like(path, clause.value, field, operator));
    case 'IN':
      return inList(path, requireList(clause.value, field, operator) as Scalar[]);
    case 'NOT IN':
      return not(inList(path, requireList(clause.value, field, operator) as Scalar[]));
    case 'BETWEEN':
    case 'NOT BETWEEN': {
      const list = requireList(clause.value, field, operator) as Scalar[];
      if (list.length !== 2) {
        throw new BadRequestError(`The operator ${operator} on [${field}] needs exactly two values.`, { field, rule: 'operator' });
      }
      const predicate = between(path, list[0]!, list[1]!);
      return operator === 'BETWEEN' ? predicate : not(predicate);
    }
    case 'NULL':
      return isNull(path);
    case 'NOT NULL':
      return not(isNull(path));
    case 'CONTAINS':
      // An array holding an element equal to the value (one level, as in the reference).
      return guarded(path, { [path]: { $type: 'array', $eq: scalar() } }, false);
    default:
      throw new BadRequestError(`Unknown filter operator "${String(clause.operator)}".`, { field, rule: 'operator' });
  }
}

/**
 * Combine clauses as SQL does (and as the reference does): AND binds tighter than OR,
 * so `a and b or c and d` is `(a and b) or (c and d)`. The first clause's boolean is ignored.
 */
export function buildFilter(where: readonly WhereClause[], keyName: string): Filter<Document> {
  if (where.length === 0) return {};
  const groups: Filter<Document>[][] = [[]];
  where.forEach((clause, index) => {
    if (index > 0 && clause.boolean === 'or') groups.push([]);
    groups[groups.length - 1]!.push(translateClause(clause, keyName));
  });
  const anded = groups.map((group) => (group.length === 1 ? group[0]! : { $and: group }));
  return anded.length === 1 ? anded[0]! : { $or: anded };
}

/**
 * Sort in the order given, then in key order (numeric keys numerically, then string
 * keys) through the hidden key-order field, so pages are stable and equal entries
 * come in the same order as on every other source.
 */
export function buildSort(orderBy: readonly OrderClause[], keyName: string): Sort {
  const sort: Array<[string, 1 | -1]> = [];
  const seen = new Set<string>();
  for (const clause of orderBy) {
    const path = fieldPath(keyName, clause.field);
    const direction = String(clause.direction).toLowerCase();
    if (direction !== 'asc' && direction !== 'desc') {
      throw new BadRequestError(`The sort direction for [${clause.field}] must be asc or desc.`, { field: clause.field, rule: 'order' });
    }
    if (seen.has(path)) continue;
    seen.add(path);
    sort.push([path, direction === 'asc' ? 1 : -1]);
  }
  // Sorting on the key itself leaves no ties to break.
  if (!seen.has('_id')) sort.push([KEY_ORDER_FIELD, 1], ['_id', 1]);
  return sort;
}
