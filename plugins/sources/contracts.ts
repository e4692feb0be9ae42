import type { KernelConfig, Logger, RegisterOptions } from '../../kernel/index.js';
import type { EntryKey, StreamDefinition } from '../streams/index.js';

/**
 * The Source contract: where the entries of one stream live. Every source type
 * (filebase, file, self, collection, the MongoDB `database` source, addon sources)
 * implements it. It is async so remote stores fit; in-memory sources answer from
 * resolved promises.
 *
 * Division of labour:
 * - The entries layer validates input, casts filter values with the field types,
 *   normalizes operators (see `normalizeWhere`), checks key syntax, runs hooks and
 *   serializes writes per entry. A source receives clean, cast data.
 * - A source stores, finds, filters, sorts and counts, and makes every acknowledged
 *   write durable. It never mutates an entry object it handed out: a write stores a
 *   new object (the entries layer caches serialized JSON per stored object).
 */

/** One stored entry: its attributes, including the key field. Treat as read-only. */
export type Entry = Record<string, unknown>;

/** An entry key as stored: a string or a number (`4` and `"4"` name the same entry); owned by streams (keys.ts). */
export type { EntryKey } from '../streams/index.js';

/**
 * Operators of decisions.md ("Lists"), canonical upper-case form. `==` and `<>` are
 * accepted on input and normalized to `=` and `!=`.
 */
export type Operator =
  | '=' | '!=' | '<' | '<=' | '>' | '>='
  | 'LIKE' | 'NOT LIKE' | 'IN' | 'NOT IN' | 'BETWEEN' | 'NOT BETWEEN'
  | 'NULL' | 'NOT NULL' | 'CONTAINS';

/**
 * One filter clause. Semantics (shared by every source; `matchesWhere` is the
 * reference implementation, MongoDB follows the same rules):
 * - Clauses join SQL-style: AND binds tighter than OR, so `a AND b OR c` is `(a AND b) OR c`.
 *   The first clause's `boolean` is ignored.
 * - `field` may be a dotted path into nested objects.
 * - Comparisons (`<`, `<=`, `>`, `>=`, BETWEEN) only match values of the same kind
 *   (number with number, string with string, boolean with boolean); null/missing never match.
 * - `=` is strict equality (deep for objects/arrays); a scalar value also matches an
 *   array field holding it (MongoDB `{f: v}`). `= null` matches null or missing.
 * - LIKE: SQL pattern (`%` any run, `_` one character, `\` escapes), anchored and
 *   case-insensitive, on string values (any string element of an array field).
 * - IN: the field (or an element of an array field) equals one of the values.
 * - NULL: null or missing. NOT NULL: present and not null.
 * - CONTAINS: the field is an array holding an element equal to the value.
 * - NOT LIKE / NOT IN / NOT BETWEEN / `!=` are the exact negation of their positive form
 *   (so a missing field matches them, as in MongoDB `$ne`/`$nin`/`$not`).
 * - `0`, `""` and `false` are ordinary values.
 */
export interface WhereClause {
  /** How this clause joins the previous ones. */
  boolean: 'and' | 'or';
  field: string;
  operator: Operator;
  /**
   * Value, already cast by the field type. IN, NOT IN, BETWEEN, NOT BETWEEN: an array
   * (BETWEEN: exactly two elements). NULL, NOT NULL: ignored.
   */
  value: unknown;
}

/**
 * One sort clause. Values order as in MongoDB: null/missing < numbers < strings <
 * objects < arrays < booleans; strings by code unit, case-sensitive. Entries equal on
 * every clause fall back to key order, so the result is deterministic on every source.
 */
export interface OrderClause {
  field: string;
  direction: 'asc' | 'desc';
}

/** A read request described by data. */
export interface SourceQuery {
  where: WhereClause[];
  /** Empty: key order (numeric keys numerically, then string keys). */
  orderBy: OrderClause[];
  /** Entries to skip after filtering and sorting (default 0). */
  skip?: number;
  /** Maximum entries to return (default: all). */
  limit?: number;
}

/** `paginate`: one page plus the number of entries matching the same filters. */
export interface SourcePage {
  entries: Entry[];
  total: number;
}

/** What a source can do beyond the required methods (callers may pick faster paths). */
export interface SourceCapabilities {
  /** Serves every read from memory after `open()` (filebase, file, self, collection). */
  inMemory: boolean;
  /** Acknowledged writes survive a restart (false for `collection`). */
  persistent: boolean;
  /**
   * Applies every write atomically in a store shared by several processes (MongoDB): a
   * create is insert-only (an existing key is refused by the store itself), so the
   * entries layer skips its existence read before an unconditional create.
   */
  atomicWrites?: boolean;
}

/**
 * What a write is, for a source shared by several processes (issue #15): there, the
 * entries layer's per-key lock orders nothing across processes, so such a source applies
 * the write in the store conditionally on the version it was decided on. Sources owned
 * by one process (files, memory) ignore it: the per-key lock already orders their writes.
 */
export interface WriteIntent {
  /**
   * create: only if no entry has the key; replace: the whole entry, only if `previous`
   * is still the stored version; patch: only the attributes that differ from `previous`
   * (set or removed), on whatever version is stored then (on `previous` only with a precondition).
   */
  mode: 'create' | 'replace' | 'patch' | 'delete';
  /** The stored entry the write was decided on (the object `get` returned); undefined for a create. */
  previous?: Entry;
  /** The request carried If-Match: a lost race answers 412 (else 409), and a patch is conditional too. */
  precondition?: boolean;
}

/** What `Source.peek` answers when only the asynchronous `get` can tell. */
export const NOT_AT_HAND: unique symbol = Symbol.for('streams-kernel:not-at-hand');

export interface Source {
  /** The source type (`filebase`, `database`, ...). */
  readonly type: string;
  readonly capabilities: SourceCapabilities;

  /**
   * Load or connect. Idempotent; the other methods call it themselves when needed
   * (lazy loading at first use), so callers may skip it. Rejects when the store is
   * unreachable; a corrupt single entry is logged (with its path) and skipped instead.
   */
  open(): Promise<void>;
  /** Finish writes in flight, then release resources. Further calls reject. */
  close(): Promise<void>;
  /** True once opened and healthy (for /readyz). */
  healthy(): Promise<boolean>;

  /** O(1) on in-memory sources. */
  get(key: EntryKey): Promise<Entry | undefined>;
  /**
   * Optional: the entry right now, when the source holds its entries in memory (undefined
   * when there is no such entry), else `NOT_AT_HAND`. A cached GET is then answered within
   * the request's own call, without a promise or a wait for the client to go away.
   */
  peek?(key: EntryKey): Entry | undefined | typeof NOT_AT_HAND;
  /**
   * Batched lookup (eager loading with `with`): one call per relation, never one per
   * entry. Missing keys are simply absent; the result keeps no particular order.
   */
  getMany(keys: EntryKey[]): Promise<Entry[]>;
  /** Filter, sort, skip and limit. */
  query(query: SourceQuery): Promise<Entry[]>;
  /** Number of entries matching `where` (all entries when empty). */
  count(where: WhereClause[]): Promise<number>;
  /** `query` plus `count` with the same filters, in one call. */
  paginate(query: SourceQuery): Promise<SourcePage>;
  /**
   * Optional: `paginate` right now, when the source holds its entries in memory, else
   * `NOT_AT_HAND`. A cached list page is then answered within the request's own call, as
   * `peek` lets a cached GET of one entry be.
   */
  paginateNow?(query: SourceQuery): SourcePage | typeof NOT_AT_HAND;

  /**
   * Store `entry` under `key` (create or replace the whole entry; `entry` holds the key
   * field). Resolves only once durable. Writes to one key apply in call order. A source
   * that has the stored entry at hand after the write (MongoDB: the document the update
   * returned) resolves with it, so the caller needs no read back.
   */
  put(key: EntryKey, entry: Entry, intent?: WriteIntent): Promise<Entry | void>;
  /** Remove one entry durably; false when there was none (see WriteIntent for `intent`). */
  delete(key: EntryKey, intent?: WriteIntent): Promise<boolean>;
  /** Remove every entry durably. */
  truncate(): Promise<void>;

  /**
   * Optional: the largest integer key stored (for `increment` keys), or undefined when
   * none. When absent the entries layer scans `query` sorted by key.
   */
  maxIntegerKey?(): Promise<number | undefined>;
  /**
   * Optional: atomically reserve the next integer key (for `increment` keys), safe when
   * several processes write the same store (MongoDB: a counters collection with `$inc`).
   * When present, the entries layer should use it instead of `maxIntegerKey` plus its
   * in-process counter, which cannot see the keys another node handed out.
   */
  allocateIntegerKey?(): Promise<number>;
  /**
   * Optional: catch up with changes made to the store outside this server (a file edited
   * on disk) before a conditional or merging write: the whole store, or the one entry of
   * `key` where entries have files of their own. Cheap when nothing changed (a stat or one
   * small read). The entries layer calls it under the entry's lock before reading the
   * current version.
   */
  refresh?(key?: EntryKey): Promise<void>;
  /**
   * Optional (live file sync): be told of entries that changed in the store outside this
   * server (a file edited, added or removed on disk), after they are served. Returns the
   * function that stops listening.
   */
  onExternalChange?(listener: (changes: ExternalChange[]) => void): () => void;
  /** Optional: resolves once every write started so far is durable (graceful shutdown). */
  drain?(): Promise<void>;
  /**
   * Optional (a store shared by several processes, #15): be told when the store changed,
   * whoever wrote it, so per-process caches of query results follow it. `changed`: drop
   * cached results; `unreliable`: changes cannot be followed now, serve nothing from a
   * cache; `reliable`: they can again. Returns the function that stops listening.
   */
  watchStore?(listener: (event: 'changed' | 'unreliable' | 'reliable') => void): () => void;
}

/** One entry changed in the store outside this server: `entry` undefined when removed, `previous` undefined when new. */
export interface ExternalChange {
  key: EntryKey;
  entry: Entry | undefined;
  previous: Entry | undefined;
  /** `disk` (default): a file edited by hand; `remote`: another node sharing the store (a MongoDB change stream). */
  origin?: 'disk' | 'remote';
}

/** Why part of a stream's storage is not served as it is on disk (the last good version is). */
export interface StorageTrouble {
  stream: string;
  path: string;
  reason: string;
}

/** What a source factory receives. */
export interface SourceContext {
  definition: StreamDefinition;
  /** The validated kernel config (root, streams.data_path, streams.default_format...). */
  config: KernelConfig;
  /** Absolute application root; file paths must stay inside it. */
  root: string;
  logger: Logger;
  /**
   * When this source replaces one (its definition changed): resolves once the old
   * source's writes are finished. Load only after it, or the new source may miss them.
   */
  after?: Promise<void>;
  /** The definitions registry's writer of inline `data` (the `self` source writes through it). */
  definitions?: { updateData(id: string, data: unknown): Promise<void> };
}

/** Creates the source of one stream (no I/O: loading happens in `open`). */
export type SourceFactory = (context: SourceContext) => Source;

/**
 * Turns a stored entry as read from a hand-written file into its typed form (`"12"` for an
 * integer field, `yes` for a boolean, as docs/sources.md promises): the new entry, and one
 * line per value that could not be cast (the source logs them with the file).
 */
export type EntryReviver = (definition: StreamDefinition, entry: Entry) => { entry: Entry; problems: readonly string[] };

/** A store for cached query results (`config.cache.store`); `memory` is built in. */
export interface CacheStore {
  get(key: string): unknown;
  set(key: string, value: unknown, ttlSeconds: number | undefined): void;
  /** Drop everything (called on any write to the stream). */
  clear(): void;
}

export type CacheStoreFactory = (context: { stream: string }) => CacheStore;

/** The registry of source types and the open source of each stream. Token: `SOURCES`. */
export interface SourceRegistry {
  /** Register a source type for `config.source.type` (call in `register`). */
  registerType(type: string, factory: SourceFactory, options?: RegisterOptions): void;
  hasType(type: string): boolean;
  types(): string[];
  /** Register a cache store for `config.cache.store` (call in `register`). */
  registerCacheStore(name: string, factory: CacheStoreFactory, options?: RegisterOptions): void;
  hasCacheStore(name: string): boolean;
  cacheStoreNames(): string[];
  /** Cast entries read from files by their field types (the entries plugin wires the fields service here). */
  setReviver(reviver: EntryReviver): void;
  /**
   * The source of a stream, created at first use and kept until the definition's
   * source settings change (`definition.changed`) or the stream is deleted. When the
   * stream's `config.cache.enabled` is true, query results are cached (flushed by any write).
   * Throws an AppError (500) naming the type when no such source type is registered.
   */
  for(definition: StreamDefinition): Source;
  /**
   * A source for `definition` that the registry neither serves nor keeps: `streams migrate`
   * copies a stream into the source its definition would name next, and verifies it, while
   * the stream is still served from its current one. The caller closes it.
   */
  detached(definition: StreamDefinition): Source;
  /** Close and forget the source of one stream (no-op when none). */
  release(stream: string): Promise<void>;
  /** Every source created so far. */
  opened(): Source[];
  /** True while the entries of every stream are loading at boot (the node is not ready yet). */
  loading(): boolean;
  /** Resolves once that boot load is over (at once when none runs). */
  whenLoaded(): Promise<void>;
  /** Be told of entries changed on disk (see Source.onExternalChange), for every stream. */
  onExternalChange(listener: (stream: string, changes: ExternalChange[]) => void): void;
  /** Files of opened sources holding an edit that cannot be read (for /readyz details). */
  troubles(): StorageTrouble[];
  /** Streams not served because their source factory threw (404 with the reason; `/readyz` names them) until redefined. */
  unserved(): Array<{ stream: string; reason: string }>;
  /** Finish writes and close every source. */
  closeAll(): Promise<void>;
}
