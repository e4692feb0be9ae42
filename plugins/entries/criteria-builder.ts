import { BadRequestError, ExtensionLedger, type RegisterOptions } from '../../kernel/index.js';
import type { CriteriaBuilder, CriteriaReadMethod, QueryStep, ReadMethodContext } from './contracts.js';

/** Raw where clause: field, operator and value still unchecked (checked and cast when run). */
export interface RawWhere {
  boolean: 'and' | 'or';
  field: unknown;
  operator: unknown;
  value: unknown;
}

/**
 * Criteria methods that change data (Laravel's and common spellings): never run from the
 * query endpoint, never registrable as read methods. The one list (the API checks it too).
 */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['create', 'save', 'delete', 'truncate', 'update', 'insert', 'upsert', 'forceDelete', 'destroy', 'put', 'remove']);
const BUILT_IN = new Set(['where', 'orWhere', 'or_where', 'orderBy', 'order_by', 'limit', 'take', 'skip', 'offset', 'with']);

function count(value: unknown, what: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new BadRequestError(`${what} takes a non-negative integer.`);
  return n;
}

/** Collects the steps of one query; produces raw clauses for the entries service. */
export class QueryCriteria implements CriteriaBuilder {
  readonly wheres: RawWhere[] = [];
  readonly orders: Array<{ field: unknown; direction: unknown }> = [];
  readonly relations: unknown[] = [];
  limitCount: number | undefined;
  skipCount = 0;

  where(field: unknown, operatorOrValue?: unknown, value?: unknown, ...rest: unknown[]): this {
    this.wheres.push(this.clause('and', [field, operatorOrValue, value, ...rest].slice(0, arguments.length)));
    return this;
  }

  orWhere(field: unknown, operatorOrValue?: unknown, value?: unknown, ...rest: unknown[]): this {
    this.wheres.push(this.clause('or', [field, operatorOrValue, value, ...rest].slice(0, arguments.length)));
    return this;
  }

  private clause(boolean: 'and' | 'or', args: unknown[]): RawWhere {
    if (args.length === 2) return { boolean, field: args[0], operator: '=', value: args[1] };
    if (args.length === 3) return { boolean, field: args[0], operator: args[1], value: args[2] };
    throw new BadRequestError(`${boolean === 'or' ? 'orWhere' : 'where'} takes [field, value] or [field, operator, value].`);
  }

  orderBy(field: unknown, direction: unknown = 'asc'): this {
    this.orders.push({ field, direction });
    return this;
  }

  limit(value: unknown): this {
    this.limitCount = count(value, 'limit');
    return this;
  }

  skip(value: unknown): this {
    this.skipCount = count(value, 'skip');
    return this;
  }

  with(...relations: unknown[]): this {
    for (const r of relations) {
      if (Array.isArray(r)) this.relations.push(...(r as unknown[]));
      else this.relations.push(r);
    }
    return this;
  }
}

/** The read methods of the query endpoint: built-ins plus what addons registered. */
export class ReadMethods {
  private readonly added = new Map<string, CriteriaReadMethod>();

  constructor(private readonly ledger: ExtensionLedger = new ExtensionLedger()) {}

  register(name: string, method: CriteriaReadMethod, options?: RegisterOptions): void {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`invalid query method name "${name}"`);
    if (BUILT_IN.has(name) || WRITE_METHODS.has(name)) throw new Error(`query method "${name}" cannot be registered`);
    this.ledger.claim('query method', name, options);
    this.added.set(name, method);
  }

  /** Apply every step to a new criteria; write and unknown methods are a 400 and nothing runs. */
  apply(steps: QueryStep[], context: ReadMethodContext): QueryCriteria {
    const criteria = new QueryCriteria();
    for (const [index, step] of steps.entries()) {
      const args = Array.isArray(step.args) ? step.args : [step.args];
      const name = step.method;
      switch (name) {
        case 'where':
          criteria.where(...(args as [unknown, unknown?, unknown?]));
          break;
        case 'orWhere':
        case 'or_where':
          criteria.orWhere(...(args as [unknown, unknown?, unknown?]));
          break;
        case 'orderBy':
        case 'order_by':
          if (args.length < 1 || args.length > 2) throw new BadRequestError(`parameters[${index}]: ${name} takes [field, direction].`);
          criteria.orderBy(args[0], args[1]);
          break;
        case 'limit':
        case 'take':
          criteria.limit(args[0]);
          break;
        case 'skip':
        case 'offset':
          criteria.skip(args[0]);
          break;
        case 'with':
          criteria.with(...args);
          break;
        default: {
          const added = typeof name === 'string' ? this.added.get(name) : undefined;
          if (!added) {
            const shown = String(name).slice(0, 40);
            throw new BadRequestError(
              WRITE_METHODS.has(shown)
                ? `parameters[${index}]: "${shown}" is a write method; the query endpoint is read-only.`
                : `parameters[${index}]: unknown query method "${shown}".`,
              { rule: 'method' },
            );
          }
          added(criteria, args, context);
        }
      }
    }
    return criteria;
  }
}

