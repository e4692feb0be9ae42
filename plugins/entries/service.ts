import { AppError, BadRequestError, pluginOfError, type ExtensionLedger, type FileRoots, type Hooks, type Logger, type RegisterOptions } from '../../kernel/index.js';
import { danglingRelations, type EntryAttributes, type EntryLookup, type FieldsService } from '../fields/index.js';
import {
  assertFieldName,
  compileWhere,
  keyId,
  NOT_AT_HAND,
  type ExternalChange,
  type OrderClause,
  type Source,
  type SourceQuery,
  type SourceRegistry,
  type WhereClause,
} from '../sources/index.js';
import { existingKey, keyNameOf, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import type { CriteriaReadMethod, EntriesService, ListQuery, ListResult, QueryStep, ReadScope, Viewer, WriteCondition } from './contracts.js';
import { andWhere } from './scope-where.js';
import { entryVersion } from './preconditions.js';
import { ReadMethods } from './criteria-builder.js';
import { KeyGenerator } from './key-generator.js';
import { takeInChanges } from './change-intake.js';
import { assertVisible, eagerLoad, type RelationContext } from './eager-load.js';
import { castClause, castScopeClause, checkOrder } from './filter-casting.js';
import { EntryJson } from './entry-json.js';
import { WritePipeline } from './write-pipeline.js';

export interface EntriesDependencies {
  streams: StreamRegistry;
  /** The kernel's ledger of registrations (a query method registered twice is refused naming both plugins). */
  extensions?: ExtensionLedger;
  /** Byte budget of the serialized-entry cache (`streams.caches.json_bytes`; default 64 MiB). */
  jsonCacheBytes?: number;
  /** Resolved lazily: the fields plugin binds its service in its own register step. */
  fields: () => FieldsService;
  sources: SourceRegistry;
  hooks: Hooks;
  logger: Logger;
  /** Files not followed because they lead out of the application's roots (issue #27): /readyz warnings. */
  fileRoots?: FileRoots;
}

/**
 * The entries of every stream: the one service the API, stream routes, realtime and addons
 * call. A façade over the parts that do the work: the write pipeline (write-pipeline.ts:
 * keys, locks, preconditions, validation, hooks, durable writes), reads with their scopes
 * and filters (filter-casting.ts) and eager loading (eager-load.ts), the serialized JSON of
 * each stored entry (entry-json.ts), key generation (key-generator.ts) and the intake of
 * changes made on disk or by other nodes (change-intake.ts).
 */
export class EntriesServiceImpl implements EntriesService {
  private readonly json: EntryJson;
  /** Compiled access filters per clause list (rule sets are resolved once per caller and kept). */
  private readonly predicates = new WeakMap<readonly WhereClause[], { definition: StreamDefinition; test: (entry: EntryAttributes) => boolean }>();
  /** Last increment key handed out per source (sources are replaced when redefined). */
  private readonly keys = new KeyGenerator();
  private readonly readMethods: ReadMethods;
  private readonly writes: WritePipeline;
  readonly lookup: EntryLookup;

  constructor(private readonly deps: EntriesDependencies) {
    this.readMethods = new ReadMethods(deps.extensions);
    this.json = new EntryJson(deps.jsonCacheBytes ?? 64 * 1024 * 1024, () => this.deps.fields());
    this.lookup = {
      exists: (stream, field, value, exceptKey) => this.exists(stream, field, value, exceptKey),
      // `default: increment` on a non-key integer field: the next number after the largest stored.
      max: (stream, field) => this.maxOf(stream, field),
      hasStream: (stream) => this.deps.streams.get(stream) !== undefined,
    };
    this.writes = new WritePipeline({
      streams: deps.streams,
      fields: () => this.deps.fields(),
      hooks: deps.hooks,
      source: (definition) => this.source(definition),
      keys: this.keys,
      lookup: this.lookup,
      hookFailed: (name, error) => this.hookFailed(name, error),
    });
  }

  private source(definition: StreamDefinition): Source {
    return this.deps.sources.for(definition);
  }

  keyOf(stream: StreamDefinition, entry: EntryAttributes): unknown {
    return entry[keyNameOf(stream)];
  }

  async find(stream: string, key: unknown): Promise<EntryAttributes | undefined> {
    const definition = this.deps.streams.require(stream);
    const cast = existingKey(definition, key);
    return cast === undefined ? undefined : this.source(definition).get(cast);
  }

  peek(stream: string, key: unknown): EntryAttributes | undefined | typeof NOT_AT_HAND {
    const definition = this.deps.streams.require(stream);
    const source = this.source(definition);
    if (source.peek === undefined) return NOT_AT_HAND;
    const cast = existingKey(definition, key);
    return cast === undefined ? undefined : source.peek(cast);
  }

  toJson(stream: StreamDefinition, entry: EntryAttributes, hidden?: ReadonlySet<string>): string {
    return this.json.of(stream, entry, hidden);
  }

  matcher(stream: string, where: readonly WhereClause[]): (entry: EntryAttributes) => boolean {
    const definition = this.deps.streams.require(stream);
    const fields = this.deps.fields();
    return compileWhere(where.map((c) => castClause(fields, definition, c)));
  }

  /** Whether an entry satisfies an access rule's clauses (compiled once per clause list). */
  satisfies(definition: StreamDefinition, where: readonly WhereClause[] | undefined, entry: EntryAttributes): boolean {
    if (where === undefined) return true;
    let compiled = this.predicates.get(where);
    if (compiled === undefined || compiled.definition !== definition) {
      const fields = this.deps.fields();
      compiled = { definition, test: compileWhere(where.map((c) => castScopeClause(fields, definition, c))) };
      this.predicates.set(where, compiled);
    }
    return compiled.test(entry);
  }

  /** The scope a viewer gives for a read, 403 when it gives none (the API answers that earlier, with 401 for the anonymous). */
  private scopeOf(definition: StreamDefinition, viewer: Viewer | undefined, action: 'list' | 'view'): ReadScope | undefined {
    if (viewer === undefined) return undefined;
    const scope = viewer(definition, action);
    if (scope === null) throw new AppError(403, 'Forbidden.');
    return scope;
  }

  /** A caller's filter under the scope's rows; hidden fields may not steer it (400), as protected ones may not. */
  private scoped(definition: StreamDefinition, where: WhereClause[], orderBy: OrderClause[], scope: ReadScope | undefined): WhereClause[] {
    if (scope === undefined) return where;
    for (const clause of [...where, ...orderBy]) assertVisible(scope, clause.field);
    const fields = this.deps.fields();
    return andWhere(where, scope.where?.map((c) => castScopeClause(fields, definition, c)));
  }

  async list(stream: string, query: ListQuery, viewer?: Viewer): Promise<ListResult> {
    const definition = this.deps.streams.require(stream);
    const scope = this.scopeOf(definition, viewer, 'list');
    const result = await this.source(definition).paginate(this.pageQuery(definition, query, scope));
    const entries = query.with && query.with.length > 0 ? await eagerLoad(this.relationContext, definition, result.entries, query.with, viewer, scope) : result.entries;
    return { entries, total: result.total };
  }

  listNow(stream: string, query: ListQuery, viewer?: Viewer): ListResult | typeof NOT_AT_HAND {
    const definition = this.deps.streams.require(stream);
    const scope = this.scopeOf(definition, viewer, 'list');
    const source = this.source(definition);
    // Relations are loaded by lookups that may wait: such a page takes `list`.
    if (source.paginateNow === undefined || (query.with !== undefined && query.with.length > 0)) return NOT_AT_HAND;
    return source.paginateNow(this.pageQuery(definition, query, scope));
  }

  /** What a list page asks its source: the caller's filter under its scope, its order, the page's window. */
  private pageQuery(definition: StreamDefinition, query: ListQuery, scope: ReadScope | undefined): SourceQuery {
    const orderBy = query.orderBy.map((o) => checkOrder(definition, o.field, o.direction));
    const fields = this.deps.fields();
    const where = this.scoped(definition, query.where.map((c) => castClause(fields, definition, c)), orderBy, scope);
    const perPage = Math.max(1, Math.trunc(query.perPage));
    const page = Math.max(1, Math.trunc(query.page));
    return { where, orderBy, skip: (page - 1) * perPage, limit: perPage };
  }

  async query(stream: string, steps: QueryStep[], page: number, perPage: number, viewer?: Viewer): Promise<ListResult> {
    const definition = this.deps.streams.require(stream);
    if (!Array.isArray(steps)) throw new BadRequestError('parameters must be an array of steps.');
    const scope = this.scopeOf(definition, viewer, 'list');
    const criteria = this.readMethods.apply(steps, { stream: definition });
    const orderBy = criteria.orders.map((o) => checkOrder(definition, o.field, o.direction));
    const fields = this.deps.fields();
    const where = this.scoped(definition, criteria.wheres.map((c) => castClause(fields, definition, c)), orderBy, scope);
    const size = Math.max(1, Math.trunc(perPage));
    const start = (Math.max(1, Math.trunc(page)) - 1) * size;
    // skip/limit define a window of the matches; pages are cut inside that window.
    const windowEnd = criteria.limitCount === undefined ? Infinity : criteria.limitCount;
    const skip = criteria.skipCount + start;
    const limit = Math.max(0, Math.min(size, windowEnd - start));
    const result = await this.source(definition).paginate({ where, orderBy, skip, limit });
    const total = Math.max(0, Math.min(result.total - criteria.skipCount, windowEnd));
    const relations = criteria.relations.map((r) => {
      if (typeof r !== 'string') throw new BadRequestError('with takes relation names.');
      return r;
    });
    const entries = relations.length > 0 ? await eagerLoad(this.relationContext, definition, result.entries, relations, viewer, scope) : result.entries;
    return { entries, total };
  }

  registerReadMethod(name: string, method: CriteriaReadMethod, options?: RegisterOptions): void {
    this.readMethods.register(name, method, options);
  }

  versionOf(entry: EntryAttributes): string {
    return entryVersion(entry);
  }

  create(stream: string, input: EntryAttributes, condition?: WriteCondition): Promise<EntryAttributes> {
    return this.writes.create(stream, input, condition);
  }

  replace(stream: string, key: unknown, input: EntryAttributes, condition?: WriteCondition): Promise<{ entry: EntryAttributes; created: boolean }> {
    return this.writes.update(stream, key, input, 'replace', condition);
  }

  patch(stream: string, key: unknown, input: EntryAttributes, condition?: WriteCondition): Promise<{ entry: EntryAttributes; created: boolean }> {
    return this.writes.update(stream, key, input, 'patch', condition);
  }

  delete(stream: string, key: unknown, condition?: WriteCondition): Promise<boolean> {
    return this.writes.delete(stream, key, condition);
  }

  syncReport(): Record<string, unknown> {
    const definitions = this.deps.streams.troubles();
    const degraded = [...definitions.degraded, ...this.deps.sources.troubles()];
    const warnings: Array<Record<string, string>> = [];
    for (const refused of this.deps.fileRoots?.warnings() ?? []) warnings.push(refused);
    const fields = this.deps.fields();
    for (const definition of this.deps.streams.list()) {
      for (const reason of definition.warnings ?? []) warnings.push({ stream: definition.id, ...(definition.file === undefined ? {} : { file: definition.file }), reason });
      for (const { handle, stream } of danglingRelations(definition, fields, this.deps.streams)) {
        warnings.push({ stream: definition.id, field: handle, reason: `relates to stream [${stream}], which does not exist: served without links` });
      }
    }
    const report: Record<string, unknown> = {};
    if (degraded.length > 0) report.degraded = degraded;
    const unserved = [...definitions.unserved, ...this.deps.sources.unserved()];
    if (unserved.length > 0) report.unserved = unserved;
    if (warnings.length > 0) report.warnings = warnings;
    return report;
  }

  async ready(): Promise<boolean> {
    // Not before the boot's load of every stream's entries is done (#16): listening is not ready.
    if (this.deps.sources.loading()) return false;
    const results = await Promise.all(this.deps.sources.opened().map((s) => s.healthy().catch(() => false)));
    return results.every(Boolean);
  }

  async drain(): Promise<void> {
    await this.writes.drain();
    await Promise.all(this.deps.sources.opened().map((s) => s.drain?.()));
  }

  /**
   * Entries changed on disk (live sync, issue #14) or by another node (a MongoDB change
   * stream, #19) are changes like any other: the `*ed` hooks fire with `origin: 'disk'` or
   * `'remote'` (realtime feeds and addons hear of them), and an
   * integer key added by hand moves the key counter past it, so the next create does not
   * collide with it.
   */
  async diskChanged(stream: string, changes: ExternalChange[]): Promise<void> {
    const definition = this.deps.streams.get(stream);
    const source = definition === undefined ? undefined : this.deps.sources.for(definition);
    await takeInChanges(this.deps.hooks, this.keys, stream, source, changes, (name, error) => this.hookFailed(name, error));
  }

  /** The largest integer value of a field (for `default: increment` on non-key fields). */
  private async maxOf(stream: string, field: string): Promise<number | undefined> {
    const definition = this.deps.streams.get(stream);
    if (!definition) return undefined;
    const name = assertFieldName(field);
    const top = await this.source(definition).query({
      where: [{ boolean: 'and', field: name, operator: 'NOT NULL', value: null }],
      orderBy: [{ field: name, direction: 'desc' }],
      limit: 1,
    });
    const value = top[0]?.[name];
    return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
  }

  private async exists(stream: string, field: string, value: unknown, exceptKey?: unknown): Promise<boolean> {
    const definition = this.deps.streams.get(stream);
    if (!definition) return false;
    const source = this.source(definition);
    const keyName = keyNameOf(definition);
    const except = exceptKey === undefined || exceptKey === null ? undefined : keyId(exceptKey);
    if (field === keyName) {
      if (typeof value !== 'string' && typeof value !== 'number') return false;
      const key = existingKey(definition, value);
      return key !== undefined && keyId(key) !== except && (await source.get(key)) !== undefined;
    }
    const where: WhereClause[] = [{ boolean: 'and', field: assertFieldName(field), operator: '=', value }];
    if (except !== undefined) where.push({ boolean: 'and', field: keyName, operator: '!=', value: exceptKey });
    return (await source.count(where)) > 0;
  }

  async withRelations(stream: string, entries: EntryAttributes[], relations: string[], viewer?: Viewer): Promise<EntryAttributes[]> {
    const definition = this.deps.streams.require(stream);
    return eagerLoad(this.relationContext, definition, entries, relations, viewer, this.scopeOf(definition, viewer, 'view'));
  }

  /** What eager loading needs of this service (eager-load.ts). */
  private readonly relationContext: RelationContext = {
    fields: () => this.deps.fields(),
    streams: () => this.deps.streams,
    source: (definition) => this.source(definition),
    satisfies: (definition, where, entry) => this.satisfies(definition, where, entry),
  };

  private hookFailed(name: string, error: unknown): void {
    this.deps.logger.error({ err: error, listener_plugin: pluginOfError(error), hook: name }, 'an entry hook listener failed after the write');
  }
}
