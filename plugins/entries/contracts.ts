import { type RegisterOptions } from '../../kernel/index.js';
import type { EntryAttributes } from '../fields/index.js';
import type { StreamDefinition } from '../streams/index.js';

// The query vocabulary lives with the Source contract; re-exported here for API users.
import type { NOT_AT_HAND, OrderClause, WhereClause } from '../sources/index.js';
export type { Operator, OrderClause, WhereClause } from '../sources/index.js';

/** A list request after the API parsed it (page is 1-based). */
export interface ListQuery {
  where: WhereClause[];
  orderBy: OrderClause[];
  page: number;
  perPage: number;
  /** Relations to eager-load (see FieldsService.relations). */
  with?: string[];
}

export interface ListResult {
  entries: EntryAttributes[];
  total: number;
}

/** One step of the query endpoint's `parameters` array: method name and its arguments. */
export interface QueryStep {
  method: string;
  args: unknown[];
}

/**
 * The criteria the query endpoint's steps build (read-only: no write method exists on
 * it). Arguments are raw; they are checked (400) and cast when the query runs.
 */
export interface CriteriaBuilder {
  /** `where(field, value)` (operator `=`) or `where(field, operator, value)`. */
  where(field: unknown, operatorOrValue?: unknown, value?: unknown, ...rest: unknown[]): this;
  orWhere(field: unknown, operatorOrValue?: unknown, value?: unknown, ...rest: unknown[]): this;
  orderBy(field: unknown, direction?: unknown): this;
  limit(count: unknown): this;
  skip(count: unknown): this;
  with(...relations: unknown[]): this;
}

/** What a read method knows about the query it runs in. */
export interface ReadMethodContext {
  /** The stream being queried: its fields, and addon keys in `extra` (e.g. a `geo.field` default). */
  stream: StreamDefinition;
}

/**
 * A read method an addon adds to the query endpoint (`{"<name>": [args...]}`). The
 * context lets a method depend on the stream (a definition extension naming a field).
 */
export type CriteriaReadMethod = (criteria: CriteriaBuilder, args: unknown[], context: ReadMethodContext) => void;

/**
 * The entries of every stream, as the API (and addons) use them. Keys are given as
 * received (a URL segment is a string) and cast by the key field's type. Every write
 * validates (409), runs the entry hooks, and is durable before it resolves.
 */
/**
 * A precondition of a write (RFC 9110 `If-Match` / `If-None-Match` as received), checked
 * under the entry's write lock against the stored version, after the source caught up
 * with its files on disk; a failed one is a 412 and changes nothing.
 */
export interface WriteCondition {
  ifMatch?: string;
  ifNoneMatch?: string;
  /**
   * An access check (issue #28) run under the entry's write lock: with the stored version
   * (undefined when there is none) and the version about to be stored (undefined for a
   * delete), after validation and the veto hooks. It throws to refuse; nothing is written.
   */
  guard?: WriteGuard;
  /** Fields a replace (PUT) keeps from the stored version: a caller who cannot see or write them cannot clear them either. */
  keep?: readonly string[];
}

export type WriteGuard = (before: EntryAttributes | undefined, after: EntryAttributes | undefined) => void;

/** The two read actions of access rules: many entries (list, query, changes) or one (show, eager loading). */
export type ReadAction = 'list' | 'view';

/**
 * What one caller may read of one stream (issue #28), resolved for that caller: the rows
 * and the fields. Plain data, so every layer (entries, API, realtime) applies the same.
 */
export interface ReadScope {
  /**
   * Names the rule set that applied, resolved (`@user.id` filled in): two callers with equal
   * keys get equal answers, so caches key on it. '' for "everything" (no rule narrows).
   */
  readonly key: string;
  /** The rows: clauses in the list endpoint's language (OR groups of ANDs, values still raw), or undefined for every row. */
  readonly where: readonly WhereClause[] | undefined;
  /** Fields never shown, never filtered or sorted on. */
  readonly hidden: ReadonlySet<string>;
}

/** Who reads (issue #28): the scope of each stream, or null when the caller may not read it at all. Absent: everything. */
export type Viewer = (definition: StreamDefinition, action: ReadAction) => ReadScope | null;

export interface EntriesService {
  find(stream: string, key: unknown): Promise<EntryAttributes | undefined>;
  /** `find` answered at once where the stream's source holds its entries in memory, else `NOT_AT_HAND` (see Source.peek). */
  peek(stream: string, key: unknown): EntryAttributes | undefined | typeof NOT_AT_HAND;
  /** Copies of `entries` with the named relations (`with`) attached; 400 for an unknown relation. */
  withRelations(stream: string, entries: EntryAttributes[], relations: string[], viewer?: Viewer): Promise<EntryAttributes[]>;
  /** With a viewer: only the rows its `list` scope shows (total too); a hidden field in a filter or sort is a 400. */
  list(stream: string, query: ListQuery, viewer?: Viewer): Promise<ListResult>;
  /** `list` answered at once where the stream's source holds its entries in memory and no relation is asked (`with`), else `NOT_AT_HAND`. */
  listNow(stream: string, query: ListQuery, viewer?: Viewer): ListResult | typeof NOT_AT_HAND;
  /** Run read-only criteria steps (query endpoint); unknown or write methods: 400. */
  query(stream: string, steps: QueryStep[], page: number, perPage: number, viewer?: Viewer): Promise<ListResult>;
  create(stream: string, input: EntryAttributes, condition?: WriteCondition): Promise<EntryAttributes>;
  replace(stream: string, key: unknown, input: EntryAttributes, condition?: WriteCondition): Promise<{ entry: EntryAttributes; created: boolean }>;
  patch(stream: string, key: unknown, input: EntryAttributes, condition?: WriteCondition): Promise<{ entry: EntryAttributes; created: boolean }>;
  /** False when there was no such entry. */
  delete(stream: string, key: unknown, condition?: WriteCondition): Promise<boolean>;
  /**
   * The strong ETag of an entry's stored version (a hash of the stored attributes,
   * cached per stored object). `If-Match` of a write is compared with it.
   */
  versionOf(entry: EntryAttributes): string;
  /**
   * The API form of an entry as a JSON string, cached per stored entry until it changes
   * (the GET hot path writes it without re-serializing).
   */
  toJson(stream: StreamDefinition, entry: EntryAttributes, hidden?: ReadonlySet<string>): string;
  /** The entry's key value. */
  keyOf(stream: StreamDefinition, entry: EntryAttributes): unknown;
  /** Every source used so far is open and healthy (for /readyz). */
  ready(): Promise<boolean>;
  /**
   * A predicate over stored entries for list-style filters (`where[...]`, `constraint[...]`),
   * checked and cast exactly as `list` does (400 on a bad field or value): the realtime feed
   * filters changes with it.
   */
  matcher(stream: string, where: readonly WhereClause[]): (entry: EntryAttributes) => boolean;
  /** Whether an entry satisfies an access rule's clauses (`ReadScope.where`; undefined: every entry). Compiled once per clause list. */
  satisfies(definition: StreamDefinition, where: readonly WhereClause[] | undefined, entry: EntryAttributes): boolean;
  /**
   * What /readyz shows without taking the node out (issue #14): `degraded` files (an edit
   * on disk that cannot be used: the last good version is served), `unserved` streams (their
   * `extends` parent is missing) and `warnings` (relationships to streams that do not
   * exist). Empty lists are left out.
   */
  syncReport(): Record<string, unknown>;
  /** Resolves when all writes in flight have finished (graceful shutdown). */
  drain(): Promise<void>;
  /**
   * Add a read method to the query endpoint (call in an addon's `register` or `boot`).
   * Names of built-in methods and write methods (create, save, delete, truncate...) are refused.
   */
  registerReadMethod(name: string, method: CriteriaReadMethod, options?: RegisterOptions): void;
}
