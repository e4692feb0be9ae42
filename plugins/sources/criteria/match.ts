import type { Entry, WhereClause } from '../contracts.js';
import { compileLike } from './like.js';
import { compareScalars, fieldReader, valuesEqual } from './values.js';

export type EntryPredicate = (entry: Entry) => boolean;

/** `=` with MongoDB's array rule: a scalar also matches an array field holding it. */
function equalsValue(stored: unknown, value: unknown): boolean {
  if (value === null || value === undefined) return stored === null || stored === undefined;
  if (valuesEqual(stored, value)) return true;
  return Array.isArray(stored) && !Array.isArray(value) && stored.some((item) => valuesEqual(item, value));
}

function compileClause(clause: WhereClause): EntryPredicate {
  const { field, operator, value } = clause;
  const read = fieldReader(field);
  // Scalar values (the usual case): the same rules as the general forms below, without
  // their calls (a filtered scan runs these once per entry).
  const kind = typeof value;
  if (value !== null && (kind === 'number' || kind === 'string' || kind === 'boolean')) {
    switch (operator) {
      case '=':
        return (e) => {
          const v = read(e);
          return v === value || (Array.isArray(v) && v.some((item) => item === value));
        };
      case '<':
        return (e) => {
          const v = read(e);
          return typeof v === kind && (v as number) < (value as number);
        };
      case '<=':
        return (e) => {
          const v = read(e);
          return typeof v === kind && (v as number) <= (value as number);
        };
      case '>':
        return (e) => {
          const v = read(e);
          return typeof v === kind && (v as number) > (value as number);
        };
      case '>=':
        return (e) => {
          const v = read(e);
          return typeof v === kind && (v as number) >= (value as number);
        };
      default:
        break;
    }
  }
  switch (operator) {
    case '=':
      return (e) => equalsValue(read(e), value);
    case '!=':
      return (e) => !equalsValue(read(e), value);
    case '<':
      return (e) => (compareScalars(read(e), value) ?? 0) < 0;
    case '<=': {
      return (e) => {
        const c = compareScalars(read(e), value);
        return c !== undefined && c <= 0;
      };
    }
    case '>':
      return (e) => (compareScalars(read(e), value) ?? 0) > 0;
    case '>=': {
      return (e) => {
        const c = compareScalars(read(e), value);
        return c !== undefined && c >= 0;
      };
    }
    case 'LIKE':
    case 'NOT LIKE': {
      const like = compileLike(String(value ?? ''));
      const test = (stored: unknown): boolean =>
        typeof stored === 'string' ? like(stored) : Array.isArray(stored) && stored.some((s) => typeof s === 'string' && like(s));
      return operator === 'LIKE' ? (e) => test(read(e)) : (e) => !test(read(e));
    }
    case 'IN':
    case 'NOT IN': {
      const list = Array.isArray(value) ? value : [value];
      const scalars = new Set(list.filter((v) => v === null || typeof v !== 'object'));
      const objects = list.filter((v) => v !== null && typeof v === 'object');
      const hitOne = (v: unknown): boolean =>
        v === null || typeof v !== 'object' ? scalars.has(v) : objects.some((o) => valuesEqual(v, o));
      // As MongoDB's $in: the value itself, or one element of an array value; never
      // deeper (`[[1]]` is not IN `[1]`).
      const hit = (stored: unknown): boolean => {
        if (stored === undefined) return scalars.has(null);
        return hitOne(stored) || (Array.isArray(stored) && stored.some(hitOne));
      };
      return operator === 'IN' ? (e) => hit(read(e)) : (e) => !hit(read(e));
    }
    case 'BETWEEN':
    case 'NOT BETWEEN': {
      const [low, high] = Array.isArray(value) ? value : [value, value];
      const inside = (stored: unknown): boolean => {
        const lo = compareScalars(stored, low);
        const hi = compareScalars(stored, high);
        return lo !== undefined && hi !== undefined && lo >= 0 && hi <= 0;
      };
      return operator === 'BETWEEN' ? (e) => inside(read(e)) : (e) => !inside(read(e));
    }
    case 'NULL':
      return (e) => {
        const v = read(e);
        return v === null || v === undefined;
      };
    case 'NOT NULL':
      return (e) => {
        const v = read(e);
        return v !== null && v !== undefined;
      };
    case 'CONTAINS':
      return (e) => {
        const v = read(e);
        return Array.isArray(v) && v.some((item) => valuesEqual(item, value));
      };
    default: {
      const never: never = operator;
      throw new Error(`unknown operator ${String(never)}`);
    }
  }
}

/**
 * Compile clauses into one predicate. AND binds tighter than OR (SQL precedence): the
 * clauses are split into groups at every `or`; an entry matches when every clause of
 * at least one group matches. No clause: everything matches.
 */
export function compileWhere(clauses: readonly WhereClause[]): EntryPredicate {
  if (clauses.length === 0) return () => true;
  return compileScalarWhere(clauses) ?? compileReferenceWhere(clauses);
}

/** The same predicate from one closure per clause: every shape (the compiled form covers the common ones). */
export function compileReferenceWhere(clauses: readonly WhereClause[]): EntryPredicate {
  if (clauses.length === 0) return () => true;
  const groups: EntryPredicate[][] = [[]];
  clauses.forEach((clause, index) => {
    if (index > 0 && clause.boolean === 'or') groups.push([]);
    groups[groups.length - 1]!.push(compileClause(clause));
  });
  if (groups.length === 1) {
    const only = groups[0]!;
    if (only.length === 1) return only[0]!;
    return (entry) => {
      for (const p of only) if (!p(entry)) return false;
      return true;
    };
  }
  return (entry) => groups.some((group) => group.every((p) => p(entry)));
}

const PLAIN_FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Compiled predicate factories by the filter's shape (fields, operators, value types; never values). */
const factories = new Map<string, (values: unknown[]) => EntryPredicate>();
const FACTORY_CACHE_MAX = 512;

/**
 * The common filter, compiled: plain fields compared with `=`, `!=`, `<`, `<=`, `>`, `>=` to
 * scalar values, in AND/OR groups. One JavaScript function per filter shape, its values
 * passed in (never written into the code; field names only after the field-name check, as
 * JSON string literals), so V8 inlines the property reads and comparisons: a filtered scan
 * spent most of its time calling one closure per clause per entry. Exactly the semantics of
 * compileClause (the differential tests of test/sources run both). Undefined: not that shape.
 */
function compileScalarWhere(clauses: readonly WhereClause[]): EntryPredicate | undefined {
  const groups: string[][] = [[]];
  const shape: string[] = [];
  const values: unknown[] = [];
  for (let i = 0; i < clauses.length; i++) {
    const { field, operator, value, boolean } = clauses[i]!;
    const kind = typeof value;
    if (!PLAIN_FIELD.test(field) || value === null || (kind !== 'number' && kind !== 'string' && kind !== 'boolean')) return undefined;
    if (i > 0 && boolean === 'or') groups.push([]);
    const v = `v${values.push(value) - 1}`;
    const read = `(t = e[${JSON.stringify(field)}])`;
    // A prototype function read through e[field] is never equal to, nor of the type of, a scalar.
    const equal = `(${read} === ${v} || (Array.isArray(t) && t.indexOf(${v}) >= 0))`;
    let expression: string;
    switch (operator) {
      case '=':
        expression = equal;
        break;
      case '!=':
        expression = `!${equal}`;
        break;
      case '<':
      case '<=':
      case '>':
      case '>=':
        expression = `(typeof ${read} === ${JSON.stringify(kind)} && t ${operator} ${v})`;
        break;
      default:
        return undefined;
    }
    groups[groups.length - 1]!.push(expression);
    shape.push(`${boolean}|${field}|${operator}|${kind}`);
  }
  const key = shape.join('\n');
  let factory = factories.get(key);
  if (factory === undefined) {
    const declarations = values.map((_, i) => `const v${i} = values[${i}];`).join(' ');
    const test = groups.map((g) => `(${g.join(' && ')})`).join(' || ');
    factory = new Function('values', `${declarations} return function (e) { let t; return ${test}; };`) as (values: unknown[]) => EntryPredicate;
    if (factories.size >= FACTORY_CACHE_MAX) factories.clear();
    factories.set(key, factory);
  }
  return factory(values);
}

/** The reference semantics of a filter on one entry (see WhereClause). */
export function matchesWhere(clauses: readonly WhereClause[], entry: Entry): boolean {
  return compileWhere(clauses)(entry);
}
