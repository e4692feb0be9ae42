import type { EntryAttributes } from '../fields/index.js';
import type { StreamDefinition } from '../streams/index.js';

// The query vocabulary lives with the Source contract; re-exported here for API users.
import type { OrderClause, WhereClause } from '../sources/index.js';
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
 * The entries of every stream, as the API (and addons) use them. Keys are given as
 * received (a URL segment is a string) and cast by the key field's type. Every write
 * validates (409), runs the entry hooks, and is durable before it resolves.
 */
export interface EntriesService {
  find(stream: string, key: unknown): Promise<EntryAttributes | undefined>;
  list(stream: string, query: ListQuery): Promise<ListResult>;
  /** Run read-only criteria steps (query endpoint); unknown or write methods: 400. */
  query(stream: string, steps: QueryStep[], page: number, perPage: number): Promise<ListResult>;
  create(stream: string, input: EntryAttributes): Promise<EntryAttributes>;
  replace(stream: string, key: unknown, input: EntryAttributes): Promise<{ entry: EntryAttributes; created: boolean }>;
  patch(stream: string, key: unknown, input: EntryAttributes): Promise<{ entry: EntryAttributes; created: boolean }>;
  /** False when there was no such entry. */
  delete(stream: string, key: unknown): Promise<boolean>;
  /**
   * The API form of an entry as a JSON string, cached per stored entry until it changes
   * (the GET hot path writes it without re-serializing).
   */
  toJson(stream: StreamDefinition, entry: EntryAttributes): string;
  /** The entry's key value. */
  keyOf(stream: StreamDefinition, entry: EntryAttributes): unknown;
  /** Every source used so far is open and healthy (for /readyz). */
  ready(): Promise<boolean>;
  /** Resolves when all writes in flight have finished (graceful shutdown). */
  drain(): Promise<void>;
}
