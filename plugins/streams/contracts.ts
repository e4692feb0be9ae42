import { type RegisterOptions } from '../../kernel/index.js';
import type { StreamDefinition } from './types.js';

/** The streams that name another one (see `StreamRegistry.dependentsOf`). */
export interface StreamDependents {
  /** Ids of the streams that `extends` it. */
  children: string[];
  /** `stream.field` of every relationship field that relates to it. */
  relations: string[];
}

/** A definition that is not served as it is on disk, and why (for the log and /readyz). */
export interface DefinitionTrouble {
  stream?: string;
  file?: string;
  reason: string;
}

/** A problem found in a definition: where (JSON path such as `/fields/2/type`) and what. */
export interface DefinitionProblem {
  path: string;
  message: string;
}

/**
 * A semantic check run on every definition after schema validation and normalization
 * (field types registered, rules known, relationship targets...). Other plugins add
 * checks in their `register` step; problems fail boot (naming file and path) or answer
 * 409 on the stream endpoints.
 */
export type DefinitionCheck = (definition: StreamDefinition, registry: StreamRegistry, context: CheckContext) => DefinitionProblem[];

/** Where the definition being checked comes from. */
export interface CheckContext {
  /**
   * `store`: a definition file (or the shared store) read at boot or reload, written by
   * the operator. `api`: a payload of the stream endpoints, written by an API client,
   * which checks may hold to stricter rules (e.g. paths confined to the data folder).
   */
  origin: 'store' | 'api';
}

/**
 * A stored definition compared with what the store last read or wrote (issue #27): every
 * write checks it first, so an edit made on disk is never overwritten blind.
 */
export type StoredState = { state: 'unchanged' } | { state: 'missing' } | { state: 'changed'; raw: Record<string, unknown> };

/** Where definitions are persisted. The default store is the `streams/` folder. */
export interface DefinitionStore {
  /**
   * Every stored raw definition, with the file it came from when there is one. `onInvalid`:
   * live sync (a file that cannot be used is skipped, not fatal); `onSkipped`: a file skipped
   * even at boot (above `streams.files.max_bytes`).
   */
  loadAll(onInvalid?: (file: string, reason: string) => void, onSkipped?: (file: string, reason: string) => void): Promise<Array<{ raw: Record<string, unknown>; file?: string; id?: string }>>;
  /** The folder of definition files, when the store is one (live sync watches it). */
  readonly path?: string;
  save(id: string, raw: Record<string, unknown>): Promise<string | undefined>;
  /**
   * Optional: the stored definition as it is now, compared with what the store last read or
   * wrote; throws a 409 AppError naming the file when it cannot be read. Called before every write.
   */
  state?(id: string): Promise<StoredState>;
  remove(id: string): Promise<boolean>;
  /**
   * Optional: notice changes made by other nodes; call `onChange` with the id. It resolves
   * once the registry serves the stored version, and rejects when that failed (the store retries).
   */
  watch?(onChange: (id: string) => Promise<void> | void): Promise<void>;
  /** Optional: read one stored definition (a reload reads only it; undefined: none stored). */
  load?(id: string): Promise<{ raw: Record<string, unknown>; file?: string; id?: string } | undefined>;
  close?(): Promise<void>;
}

export type DefinitionStoreFactory = (context: { id: string; root: string; path: string }) => DefinitionStore;

/**
 * A precondition of a definition write, called under the registry's write lock with the
 * stored definition (undefined: none). Throw (e.g. a 412 AppError) to refuse the write.
 */
export type DefinitionGuard = (current: StreamDefinition | undefined) => void;

export interface WriteResult {
  definition: StreamDefinition;
  created: boolean;
}

/** The registry of stream definitions (entries of the meta-stream `streams_id`). */
export interface StreamRegistry {
  /** The meta-stream id (the `streams_id` setting, default `core.streams`). */
  readonly metaId: string;
  has(id: string): boolean;
  get(id: string): StreamDefinition | undefined;
  /** The definition, or a NotFoundError (404) "Stream [id] not found.". */
  require(id: string): StreamDefinition;
  /** All definitions, sorted by id. */
  list(): StreamDefinition[];
  /** Validate and normalize without storing (throws ValidationError with one element per problem). */
  build(raw: Record<string, unknown>, id?: string): Promise<StreamDefinition>;
  /** POST: 409 when the id exists. */
  create(raw: Record<string, unknown>): Promise<StreamDefinition>;
  /** PUT: replace (created = true when it did not exist). */
  replace(id: string, raw: Record<string, unknown>, guard?: DefinitionGuard): Promise<WriteResult>;
  /** PATCH: merge top-level keys (created = true when it did not exist). */
  merge(id: string, raw: Record<string, unknown>, guard?: DefinitionGuard): Promise<WriteResult>;
  /**
   * DELETE: removes the definition only; entries stay on disk. False when unknown. The
   * guard (If-Match) is checked first (412); then a stream that other streams `extends` is
   * kept (409 naming each child, even with `force`), and so is one their relationship
   * fields name, unless `force` (409 naming each `stream.field`).
   */
  remove(id: string, options?: { guard?: DefinitionGuard; force?: boolean }): Promise<boolean>;
  /** Who names stream `id`: children that extend it, and `stream.field` relationships to it. */
  dependentsOf(id: string): StreamDependents;
  /**
   * Replace a definition's inline `data` durably (the `self` source's writes), serialized
   * with the other definition writes so neither loses the other's change. NotFoundError
   * when the stream was deleted meanwhile. Publishes no change event.
   */
  updateData(id: string, data: unknown): Promise<void>;
  /** Add a semantic check (call in `register`). */
  addCheck(check: DefinitionCheck): void;
  /** Register a definition store type for the `streams.source.type` setting (call in `register`). */
  registerStore(type: string, factory: DefinitionStoreFactory, options?: RegisterOptions): void;
  /** Reload one definition from the store (used when another node changed it). */
  reload(id: string): Promise<void>;
  /**
   * Definition files not served as they are on disk (live sync, issue #14): `degraded`
   * (an edit that cannot be used: the last good version is served) and `unserved` (a
   * stream whose `extends` parent is missing). For the log and /readyz details.
   */
  troubles(): { degraded: DefinitionTrouble[]; unserved: DefinitionTrouble[] };
}
