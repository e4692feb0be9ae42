import { AppError, BadRequestError, ByteBudgetMap, KeyedLock, ValidationError, pluginOfError, type FileRoots, type Hooks, type Logger, type ExtensionLedger, type RegisterOptions } from '../../kernel/index.js';
import type { EntryHookPayload } from './hooks.js';
import { danglingRelations, type EntryAttributes, type EntryLookup, type FieldsService } from '../fields/index.js';
import {
  assertFieldName,
  compileWhere,
  keyId,
  normalizeOperator,
  NOT_AT_HAND,
  normalizeWhere,
  type Entry,
  type EntryKey,
  type ExternalChange,
  type OrderClause,
  type Source,
  type SourceRegistry,
  type WhereClause,
} from '../sources/index.js';
import { castKey, existingKey, fieldOf, keyNameOf, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import type { CriteriaReadMethod, EntriesService, ListQuery, ListResult, QueryStep, ReadScope, Viewer, WriteCondition } from './contracts.js';
import { andWhere } from './scope-where.js';
import { checkCondition, entryVersion } from './preconditions.js';
import { ReadMethods, type RawWhere } from './criteria-builder.js';
import { runAfterHook, runVetoHook } from './hook-runner.js';
import { KeyGenerator } from './key-generator.js';
import { takeInChanges } from './change-intake.js';
import { assertVisible, eagerLoad, type RelationContext } from './eager-load.js';

const FORBIDDEN_ATTRIBUTES = ['__proto__', 'constructor', 'prototype'];

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

type WriteMode = 'create' | 'replace' | 'patch';

/**
 * The entries of every stream: keys, validation, hooks, per-entry write serialization,
 * eager loading, and the serialized JSON of each stored entry cached until it changes.
 */
export class EntriesServiceImpl implements EntriesService {
  private readonly locks = new KeyedLock();
  /**
   * Serialized API form per stored entry object (a write stores a new object, so a kept text
   * is never stale), within a byte budget: unbounded, reading every entry of 1M once held
   * about 150 MB more, for as long as the entries lived.
   */
  private readonly json: ByteBudgetMap<object, { definition: StreamDefinition; text: string }>;
  /** The same for callers with hidden fields (issue #28), per entry and hidden set (one set per entry kept: the last asked). */
  private readonly narrowJson: ByteBudgetMap<object, { definition: StreamDefinition; hidden: ReadonlySet<string>; text: string }>;
  /** Compiled access filters per clause list (rule sets are resolved once per caller and kept). */
  private readonly predicates = new WeakMap<readonly WhereClause[], { definition: StreamDefinition; test: (entry: EntryAttributes) => boolean }>();
  /** Last increment key handed out per source (sources are replaced when redefined). */
  private readonly keys = new KeyGenerator();
  /** Per stream, for streams with a `unique` rule (see `write`). */
  private readonly uniqueWrites = new KeyedLock();
  private readonly readMethods: ReadMethods;
  private writes = 0;
  private drainWaiters: Array<() => void> = [];
  readonly lookup: EntryLookup;

  constructor(private readonly deps: EntriesDependencies) {
    this.readMethods = new ReadMethods(deps.extensions);
    this.json = new ByteBudgetMap(deps.jsonCacheBytes ?? 64 * 1024 * 1024, { name: 'entry_json' });
    this.narrowJson = new ByteBudgetMap(Math.floor((deps.jsonCacheBytes ?? 64 * 1024 * 1024) / 4), { name: 'entry_json_narrowed' });
    this.lookup = {
      exists: (stream, field, value, exceptKey) => this.exists(stream, field, value, exceptKey),
      // `default: increment` on a non-key integer field: the next number after the largest stored.
      max: (stream, field) => this.maxOf(stream, field),
      hasStream: (stream) => this.deps.streams.get(stream) !== undefined,
    };
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
    if (hidden !== undefined && hidden.size > 0) return this.narrowToJson(stream, entry, hidden);
    const cached = this.json.get(entry);
    if (cached && cached.definition === stream) return cached.text;
    const text = JSON.stringify(this.deps.fields().serialize(stream, entry));
    // Two bytes a character (V8 keeps non-Latin-1 text in two), and the record and map slot around it.
    this.json.set(entry, { definition: stream, text }, 2 * text.length + 96);
    return text;
  }

  matcher(stream: string, where: readonly WhereClause[]): (entry: EntryAttributes) => boolean {
    const definition = this.deps.streams.require(stream);
    return compileWhere(where.map((c) => this.castClause(definition, c)));
  }

  /** The API form without the hidden fields: the same bytes for every caller with the same hidden set. */
  private narrowToJson(stream: StreamDefinition, entry: EntryAttributes, hidden: ReadonlySet<string>): string {
    const cached = this.narrowJson.get(entry);
    if (cached && cached.definition === stream && cached.hidden === hidden) return cached.text;
    const shown = this.deps.fields().serialize(stream, entry);
    for (const name of hidden) delete shown[name];
    const text = JSON.stringify(shown);
    this.narrowJson.set(entry, { definition: stream, hidden, text }, 2 * text.length + 96);
    return text;
  }

  /** Whether an entry satisfies an access rule's clauses (compiled once per clause list). */
  satisfies(definition: StreamDefinition, where: readonly WhereClause[] | undefined, entry: EntryAttributes): boolean {
    if (where === undefined) return true;
    let compiled = this.predicates.get(where);
    if (compiled === undefined || compiled.definition !== definition) {
      compiled = { definition, test: compileWhere(where.map((c) => this.castScopeClause(definition, c))) };
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
    return andWhere(where, scope.where?.map((c) => this.castScopeClause(definition, c)));
  }
  async list(stream: string, query: ListQuery, viewer?: Viewer): Promise<ListResult> {
    const definition = this.deps.streams.require(stream);
    const scope = this.scopeOf(definition, viewer, 'list');
    const orderBy = query.orderBy.map((o) => this.checkOrder(definition, o.field, o.direction));
    const where = this.scoped(definition, query.where.map((c) => this.castClause(definition, c)), orderBy, scope);
    const perPage = Math.max(1, Math.trunc(query.perPage));
    const page = Math.max(1, Math.trunc(query.page));
    const result = await this.source(definition).paginate({ where, orderBy, skip: (page - 1) * perPage, limit: perPage });
    const entries = query.with && query.with.length > 0 ? await eagerLoad(this.relationContext, definition, result.entries, query.with, viewer, scope) : result.entries;
    return { entries, total: result.total };
  }

  async query(stream: string, steps: QueryStep[], page: number, perPage: number, viewer?: Viewer): Promise<ListResult> {
    const definition = this.deps.streams.require(stream);
    if (!Array.isArray(steps)) throw new BadRequestError('parameters must be an array of steps.');
    const scope = this.scopeOf(definition, viewer, 'list');
    const criteria = this.readMethods.apply(steps, { stream: definition });
    const orderBy = criteria.orders.map((o) => this.checkOrder(definition, o.field, o.direction));
    const where = this.scoped(definition, criteria.wheres.map((c) => this.castRaw(definition, c)), orderBy, scope);
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

  async create(stream: string, input: EntryAttributes, condition?: WriteCondition): Promise<EntryAttributes> {
    const definition = this.deps.streams.require(stream);
    this.checkInput(input);
    const keyName = keyNameOf(definition);
    const source = this.source(definition);
    const given = input[keyName];
    const generated = given === undefined || given === null || given === '';
    const key = generated ? await this.keys.generate(definition, source) : castKey(definition, given);
    try {
      return await this.createEntry(definition, source, key, input, condition);
    } catch (error) {
      // A failed create does not consume its number: give it back when no later one was handed out.
      if (generated) this.keys.giveBack(source, key);
      throw error;
    }
  }

  private createEntry(definition: StreamDefinition, source: Source, key: EntryKey, input: EntryAttributes, condition?: WriteCondition): Promise<EntryAttributes> {
    const stream = definition.id;
    const keyName = keyNameOf(definition);
    return this.tracked(() =>
      this.locks.run(this.lockId(stream, key), async () => {
        // A store shared by several processes refuses an existing key itself (insert-only,
        // the same 409): reading first would only add a round trip and decide nothing.
        if (!source.capabilities.atomicWrites || condition) {
          await source.refresh?.(key);
          const existing = await source.get(key);
          checkCondition(condition, existing);
          if (existing) {
            throw new ValidationError([{ message: `The ${keyName} has already been taken.`, meta: { field: keyName, rule: 'unique' } }]);
          }
        }
        return this.write(definition, source, 'create', key, { ...input, [keyName]: key }, undefined, false, condition);
      }),
    );
  }

  replace(stream: string, key: unknown, input: EntryAttributes, condition?: WriteCondition): Promise<{ entry: EntryAttributes; created: boolean }> {
    return this.update(stream, key, input, 'replace', condition);
  }

  patch(stream: string, key: unknown, input: EntryAttributes, condition?: WriteCondition): Promise<{ entry: EntryAttributes; created: boolean }> {
    return this.update(stream, key, input, 'patch', condition);
  }

  private async update(
    stream: string,
    rawKey: unknown,
    input: EntryAttributes,
    mode: 'replace' | 'patch',
    condition?: WriteCondition,
  ): Promise<{ entry: EntryAttributes; created: boolean }> {
    const definition = this.deps.streams.require(stream);
    this.checkInput(input);
    const keyName = keyNameOf(definition);
    const key = castKey(definition, rawKey);
    const source = this.source(definition);
    return this.tracked(() =>
      this.locks.run(this.lockId(stream, key), async () => {
        // Catch up with an edit made on disk first: a PATCH merges into the current
        // version and a stale If-Match is refused rather than applied blind.
        await source.refresh?.(key);
        const existing = await source.get(key);
        checkCondition(condition, existing);
        // The URL segment is the key (decisions: set on the payload as the entry key).
        const payload = { ...input, [keyName]: key };
        const entry = await this.write(definition, source, existing ? mode : 'create', key, payload, existing, condition?.ifMatch !== undefined, condition);
        return { entry, created: !existing };
      }),
    );
  }

  async delete(stream: string, rawKey: unknown, condition?: WriteCondition): Promise<boolean> {
    const definition = this.deps.streams.require(stream);
    const key = existingKey(definition, rawKey);
    if (key === undefined) return false;
    const source = this.source(definition);
    return this.tracked(() =>
      this.locks.run(this.lockId(stream, key), async () => {
        await source.refresh?.(key);
        const existing = await source.get(key);
        if (existing) checkCondition(condition, existing);
        if (!existing) return false;
        condition?.guard?.(existing, undefined);
        const payload: EntryHookPayload = { stream, key, entry: { ...existing }, original: existing };
        await runVetoHook(this.deps.hooks, 'entry.deleting', payload);
        // Applied only to the version read above where the store is shared (WriteIntent).
        const removed = await source.delete(key, { mode: 'delete', previous: existing, precondition: condition?.ifMatch !== undefined });
        await runAfterHook(this.deps.hooks, 'entry.deleted', { ...payload, origin: 'api' }, (e) => this.hookFailed('entry.deleted', e));
        return removed;
      }),
    );
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
    if (this.writes > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    await this.locks.idle();
    await Promise.all(this.deps.sources.opened().map((s) => s.drain?.()));
  }

  /** Validate, run the hooks and store one entry (called under the entry's lock). */
  private write(...args: WriteArgs): Promise<EntryAttributes> {
    // `unique` is a check across entries: two writes of different keys must not both
    // pass it before either is stored. Such streams write one entry at a time (this
    // lock is always taken after the entry's own, so the order cannot deadlock).
    // The same holds for a non-key `increment` default (the next number is read, then written).
    const definition = args[0];
    if (!hasUniqueRule(definition) && !hasFieldIncrement(definition)) return this.writeEntry(...args);
    return this.uniqueWrites.run(definition.id, () => this.writeEntry(...args));
  }

  private async writeEntry(...[definition, source, mode, key, input, existing, precondition, condition]: WriteArgs): Promise<EntryAttributes> {
    const keyName = keyNameOf(definition);
    const prepared = await this.deps.fields().prepare(definition, input, { mode, existing, key, lookup: this.lookup });
    const entry: EntryAttributes = mode === 'patch' && existing ? { ...existing, ...prepared } : { ...prepared };
    entry[keyName] = key;
    // What the caller may not see or write survives a replace (issue #28).
    if (mode === 'replace' && existing && condition?.keep) for (const name of condition.keep) if (Object.hasOwn(existing, name)) entry[name] = existing[name];
    const payload: EntryHookPayload = { stream: definition.id, key, entry, original: existing };
    const hooks = this.deps.hooks;
    await runVetoHook(hooks, 'entry.saving', payload);
    await runVetoHook(hooks, existing ? 'entry.updating' : 'entry.creating', payload);
    // A listener may have changed the attributes, never the key.
    const stored: Entry = { ...payload.entry, [keyName]: key };
    // Access rules see the entry as it would be stored: defaults and hook changes included.
    condition?.guard?.(existing, stored);
    // The intent lets a shared store apply the write to the version it was decided on (WriteIntent).
    const saved = await source.put(key, stored, { mode, previous: existing, precondition });
    this.keys.stored(source, key);
    const done: EntryHookPayload = { stream: definition.id, key, entry: stored, original: existing, origin: 'api' };
    await runAfterHook(hooks, existing ? 'entry.updated' : 'entry.created', done, (e) => this.hookFailed('created/updated', e));
    await runAfterHook(hooks, 'entry.saved', done, (e) => this.hookFailed('entry.saved', e));
    // Hand back the stored object itself so its serialized JSON is cached by identity.
    return saved ?? (await source.get(key)) ?? stored;
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
      let key: EntryKey;
      try {
        key = castKey(definition, value);
      } catch {
        return false;
      }
      return keyId(key) !== except && (await source.get(key)) !== undefined;
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

  private castClause(definition: StreamDefinition, clause: WhereClause): WhereClause {
    return this.castRaw(definition, clause);
  }

  /** An access rule's clause, cast like a caller's (a rule may read a protected field: it never leaves the server). */
  private castScopeClause(definition: StreamDefinition, clause: WhereClause): WhereClause {
    const fields = this.deps.fields();
    const operator = normalizeOperator(clause.operator);
    return normalizeWhere(assertFieldName(clause.field), operator, clause.value, clause.boolean === 'or' ? 'or' : 'and', (v) =>
      v === null ? null : fields.castFilterValue(definition, clause.field, v, operator),
    );
  }

  private castRaw(definition: StreamDefinition, clause: RawWhere | WhereClause): WhereClause {
    const fields = this.deps.fields();
    const field = readableField(definition, assertFieldName(clause.field));
    rejectOperatorObjects(clause.value);
    const operator = normalizeOperator(clause.operator);
    // The operator goes along: a LIKE pattern stays a string whatever the field type.
    return normalizeWhere(field, operator, clause.value, clause.boolean === 'or' ? 'or' : 'and', (v) =>
      v === null ? null : fields.castFilterValue(definition, field, v, operator),
    );
  }

  private checkOrder(definition: StreamDefinition, field: unknown, direction: unknown): OrderClause {
    const dir = typeof direction === 'string' ? direction.toLowerCase() : direction;
    if (dir !== 'asc' && dir !== 'desc') throw new BadRequestError(`Sort direction must be asc or desc, got "${String(direction).slice(0, 20)}".`);
    return { field: readableField(definition, assertFieldName(field)), direction: dir };
  }

  private checkInput(input: EntryAttributes): void {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new BadRequestError('The entry must be a JSON object.');
    for (const name of FORBIDDEN_ATTRIBUTES) {
      if (Object.hasOwn(input, name)) throw new BadRequestError(`"${name}" is not a valid field name.`, { field: name });
    }
  }

  private lockId(stream: string, key: EntryKey): string {
    return `${stream}\u0000${keyId(key)}`;
  }

  private async tracked<T>(task: () => Promise<T>): Promise<T> {
    this.writes++;
    try {
      return await task();
    } finally {
      if (--this.writes === 0) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        for (const wake of waiters) wake();
      }
    }
  }

  private hookFailed(name: string, error: unknown): void {
    this.deps.logger.error({ err: error, listener_plugin: pluginOfError(error), hook: name }, 'an entry hook listener failed after the write');
  }
}

/** `{ "$ne": 1 }` as a filter value would be an operator to some stores: only plain values pass. */
function rejectOperatorObjects(value: unknown): void {
  const check = (v: unknown): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      throw new BadRequestError('Filter values must be strings, numbers, booleans, null or lists of them.');
    }
  };
  if (Array.isArray(value)) value.forEach(check);
  else check(value);
}

type WriteArgs = [definition: StreamDefinition, source: Source, mode: WriteMode, key: EntryKey, input: EntryAttributes, existing: Entry | undefined, precondition: boolean, condition?: WriteCondition];

const uniqueStreams = new WeakMap<StreamDefinition, boolean>();

/** Whether any field of the stream carries `unique` (flag, field rules or stream rules); once per definition. */
function hasUniqueRule(definition: StreamDefinition): boolean {
  let found = uniqueStreams.get(definition);
  if (found === undefined) {
    const isUnique = (rule: string): boolean => rule === 'unique' || rule.startsWith('unique:');
    found = definition.fields.some((f) => f.unique || f.rules.some(isUnique)) || Object.values(definition.rules).some((rules) => rules.some(isUnique));
    uniqueStreams.set(definition, found);
  }
  return found;
}

const incrementStreams = new WeakMap<StreamDefinition, boolean>();

/** Whether a non-key field defaults to `increment` (its next number is read, then written); once per definition. */
function hasFieldIncrement(definition: StreamDefinition): boolean {
  let found = incrementStreams.get(definition);
  if (found === undefined) {
    found = definition.fields.some((f) => f.handle !== keyNameOf(definition) && f.config.default === 'increment');
    incrementStreams.set(definition, found);
  }
  return found;
}

/**
 * A protected field never leaves the server, so it may not steer a filter or a sort
 * either: `where[secret]=a%` answered yes/no would reveal it character by character.
 */
function readableField(definition: StreamDefinition, field: string): string {
  const head = field.split('.', 1)[0]!;
  if (fieldOf(definition, head)?.protected === true) {
    throw new BadRequestError(`The ${head} field is protected: it cannot be used to filter or sort.`, { field: head, rule: 'protected' });
  }
  return field;
}

/** A hidden field (issue #28) may not steer a filter, a sort or eager loading: its values would show through the answers. */
