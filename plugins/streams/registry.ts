import { AppError, ConfigError, KeyedLock, NotFoundError, ValidationError, type ErrorElement, type FileRoots, type Hooks, type Logger, ExtensionLedger, LastReadMap, type RegisterOptions } from '../../kernel/index.js';
import type {
  DefinitionCheck,
  DefinitionGuard,
  DefinitionStore,
  DefinitionStoreFactory,
  DefinitionTrouble,
  StoredState,
  StreamDependents,
  StreamRegistry,
  WriteResult,
} from './contracts.js';
import { DefinitionBuilder, DefinitionProblems } from './definition-builder.js';
import { DefinitionTroubles } from './definition-troubles.js';
import { DefinitionSync } from './definition-sync.js';
import type { DefinitionChangedPayload } from './hooks.js';
import { importedFiles } from './imports.js';
import type { StreamDefinition } from './types.js';

interface RegistrySettings {
  metaId: string;
  root: string;
  path: string;
  storeType: string;
  defaultSource: string;
  defaultFormat: string;
  /** Imported files obey the same roots and size limit as definition files (issue #27). */
  roots?: FileRoots;
  maxBytes?: number;
  /** `streams check` (config.report_all): a definition that cannot be built is logged and skipped, not fatal. */
  reportAll?: boolean;
}

function asValidationError(problems: DefinitionProblems): ValidationError {
  const elements: ErrorElement[] = problems.problems.map((p) => ({
    message: `The definition is invalid at ${p.path}: ${p.message}.`.replace(/\.\.$/, '.'),
    meta: { field: p.path, rule: 'definition' },
  }));
  return new ValidationError(elements);
}

function asConfigError(problems: DefinitionProblems, fallbackFile: string): ConfigError {
  const first = problems.problems[0]!;
  const more = problems.problems.length > 1 ? ` (and ${problems.problems.length - 1} more: ${problems.problems.slice(1).map((p) => `${p.path}: ${p.message}`).join('; ')})` : '';
  return new ConfigError(`${first.message}${more}`, problems.file ?? fallbackFile, first.path);
}

/**
 * The registry of stream definitions. Definitions are immutable values: a change builds
 * a new object, so other plugins may cache per definition object (WeakMap).
 */
export class DefinitionRegistry implements StreamRegistry {
  readonly metaId: string;
  /** By id; read twice by every entry request with the same id (`LastReadMap`). */
  private readonly definitions = new LastReadMap<string, StreamDefinition>();
  private sorted?: StreamDefinition[];
  private readonly builder: DefinitionBuilder;
  private readonly storeFactories = new Map<string, DefinitionStoreFactory>();
  private store?: DefinitionStore;
  private readonly lock = new KeyedLock();
  /**
   * The JSON of each definition as last read from or written to the store: live sync
   * compares the files with it, so the server's own writes (and files that did not
   * change) are recognized and nothing is rebuilt for them.
   */
  private readonly storedJson = new Map<string, string>();
  /** What is not served as it is on disk, and the warnings already logged (definition-troubles.ts). */
  private readonly troubleLog: DefinitionTroubles;
  /** Live sync of the store's files (definition-sync.ts). */
  private readonly liveSync: DefinitionSync;

  constructor(
    private readonly settings: RegistrySettings,
    private readonly hooks: Hooks,
    private readonly logger: Logger,
    private readonly ledger: ExtensionLedger = new ExtensionLedger(),
  ) {
    this.metaId = settings.metaId;
    this.troubleLog = new DefinitionTroubles(logger);
    this.liveSync = new DefinitionSync({
      metaId: this.metaId,
      root: settings.root,
      path: settings.path,
      logger,
      definitions: this.definitions,
      storedJson: this.storedJson,
      troubles: this.troubleLog,
      lock: this.lock,
      store: () => this.store,
      build: (input) => this.builder.build(input, this),
      changed: (payload) => this.changed(payload),
      publish: (definition, action) => this.publish(definition, action),
      reordered: () => {
        this.sorted = undefined;
      },
    });
    this.builder = new DefinitionBuilder(
      settings.root,
      settings.path,
      hooks,
      { defaultSource: settings.defaultSource, defaultFormat: settings.defaultFormat },
      { roots: settings.roots, maxBytes: settings.maxBytes },
    );
  }

  addCheck(check: DefinitionCheck): void {
    this.builder.checks.push(check);
  }

  registerStore(type: string, factory: DefinitionStoreFactory, options?: RegisterOptions): void {
    this.ledger.claim('definition store', type, options);
    this.storeFactories.set(type, factory);
  }

  has(id: string): boolean {
    return this.definitions.has(id);
  }

  get(id: string): StreamDefinition | undefined {
    return this.definitions.get(id);
  }

  require(id: string): StreamDefinition {
    const definition = this.definitions.get(id);
    if (!definition) {
      const orphan = this.troubleLog.orphans.get(id);
      if (orphan !== undefined) throw new NotFoundError(`Stream [${id}] is not served: it ${orphan.reason}.`);
      throw new NotFoundError(`Stream [${id}] not found.`);
    }
    return definition;
  }

  list(): StreamDefinition[] {
    this.sorted ??= [...this.definitions.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.sorted;
  }

  /** Boot: choose the store, collect addon schema, load every definition (parents first). */
  /**
   * Announce a definition change: it is done (on disk or in the store) when this runs, so each
   * listener runs on its own and one that throws is logged with its plugin, never answered to
   * the writer as if the change had failed, never keeping it from the listeners after it.
   */
  private async changed(payload: DefinitionChangedPayload): Promise<void> {
    await this.hooks.notify('definition.changed', payload, (error, plugin) =>
      this.logger.error({ err: error, listener_plugin: plugin, stream: payload.id }, 'a definition.changed listener failed'),
    );
  }

  async load(): Promise<void> {
    const factory = this.storeFactories.get(this.settings.storeType);
    if (!factory) {
      throw new ConfigError(
        `streams.source.type "${this.settings.storeType}" has no definition store (known: ${[...this.storeFactories.keys()].join(', ')})`,
        undefined,
        '/streams/source/type',
      );
    }
    this.store = factory({ id: this.settings.metaId, root: this.settings.root, path: this.settings.path });
    await this.builder.collectExtensions();
    // A server stops at the first broken definition; `streams check` names them all.
    const problem = (error: unknown): void => {
      if (this.settings.reportAll !== true || !(error instanceof ConfigError)) throw error;
      this.logger.error({ file: error.file, at: error.path, problem: error.problem }, error.message);
    };
    const onInvalid = this.settings.reportAll === true ? (file: string, reason: string) => problem(new ConfigError(reason, file, '/')) : undefined;
    const items = await this.store.loadAll(onInvalid, (file, reason) => this.troubleLog.report(file, { file, reason }));
    const pending = new Map<string, { raw: Record<string, unknown>; file?: string }>();
    for (const item of items) {
      const id = (item.raw.id ?? item.raw.handle ?? item.id) as string | undefined;
      try {
        if (id === undefined) throw new ConfigError('a stream definition needs an id', item.file, '/id');
        if (pending.has(id)) {
          throw new ConfigError(`stream id [${id}] is also defined in ${pending.get(id)!.file ?? 'another definition'}`, item.file, '/id');
        }
        if (id === this.metaId) throw new ConfigError(`stream id [${id}] is reserved for the meta-stream`, item.file, '/id');
      } catch (error) {
        problem(error);
        continue;
      }
      pending.set(id, item);
    }
    const building = new Set<string>();
    const buildOne = async (id: string): Promise<StreamDefinition | undefined> => {
      const done = this.definitions.get(id);
      if (done || this.troubleLog.orphans.has(id)) return done;
      const item = pending.get(id)!;
      building.add(id);
      const parentId = item.raw.extends;
      if (typeof parentId === 'string' && parentId !== id && !this.definitions.has(parentId)) {
        if (building.has(parentId)) {
          throw new ConfigError(`extends [${parentId}], which extends [${id}]: a cycle`, item.file, '/extends');
        }
        // A parent deleted by hand never stops the boot: this stream waits for it (served
        // again once the parent file is back), everything else is served.
        if (!pending.has(parentId) || (await buildOne(parentId)) === undefined) {
          building.delete(id);
          this.troubleLog.orphan(id, item.file, parentId);
          return undefined;
        }
      }
      try {
        const definition = await this.builder.build({ raw: item.raw, id, file: item.file, parentOf: (p) => this.definitions.get(p) }, this);
        this.definitions.set(id, definition);
        this.storedJson.set(id, JSON.stringify(item.raw));
        this.troubleLog.warnOnce(definition);
        return definition;
      } catch (error) {
        if (error instanceof DefinitionProblems) throw asConfigError(error, item.file ?? this.settings.path);
        throw error;
      } finally {
        building.delete(id);
      }
    };
    for (const id of pending.keys()) {
      try {
        await buildOne(id);
      } catch (error) {
        problem(error);
      }
    }
    this.sorted = undefined;
    // The store is told when a reload fails, so it can retry it (a shared store: #15).
    if (this.store.watch) {
      await this.store.watch((id) =>
        this.reload(id).catch((e: unknown) => {
          this.logger.error({ err: e, id }, 'reload failed');
          throw e;
        }),
      );
    }
    this.logger.debug({ count: this.definitions.size }, 'stream definitions loaded');
  }

  async build(raw: Record<string, unknown>, id?: string): Promise<StreamDefinition> {
    return this.buildForApi(raw, id, false);
  }

  private async buildForApi(raw: Record<string, unknown>, id: string | undefined, forceId: boolean): Promise<StreamDefinition> {
    try {
      const definition = await this.builder.build({ raw, id, forceId, origin: 'api', parentOf: (p) => this.definitions.get(p) }, this);
      if (definition.id === this.metaId) {
        throw new ValidationError([{ message: `The id [${definition.id}] is reserved.`, meta: { field: 'id', rule: 'not_in' } }]);
      }
      return definition;
    } catch (error) {
      if (error instanceof DefinitionProblems) throw asValidationError(error);
      throw error;
    }
  }

  /*
   * Writes build and store under one lock (so a PATCH starts from the current stored
   * definition, `data` included), and publish `definition.changed` after releasing it:
   * listeners (the sources) may wait for writes that themselves need the lock
   * (`updateData`), which would otherwise deadlock.
   */

  async create(raw: Record<string, unknown>): Promise<StreamDefinition> {
    const definition = await this.lock.run('definitions', async () => {
      const built = await this.buildForApi(raw, undefined, false);
      // A file of that id not served yet (a hand edit not synced) takes the id as well.
      if (this.definitions.has(built.id) || (await this.onDisk(built.id)).state === 'changed') {
        throw new ValidationError([{ message: 'The id has already been taken.', meta: { field: 'id', rule: 'unique' } }]);
      }
      await this.storeDefinition(built);
      return built;
    });
    await this.publish(definition, 'created');
    return definition;
  }

  async replace(id: string, raw: Record<string, unknown>, guard?: DefinitionGuard): Promise<WriteResult> {
    const result = await this.lock.run('definitions', async () => {
      guard?.(this.definitions.get(id));
      const existing = this.definitions.get(id);
      const created = !existing;
      const disk = existing ? await this.onDisk(id) : undefined;
      const current = disk?.state === 'changed' ? disk.raw : existing?.raw;
      const body = { ...raw };
      delete body.handle;
      // A PUT without `data` replaces the definition, not the entries a `self` stream keeps
      // in it (docs/sources.md); sending `data` (even []) replaces them.
      if (!Object.hasOwn(body, 'data') && current?.data !== undefined) body.data = current.data;
      const definition = await this.buildForApi(body, id, true);
      await this.storeDefinition(definition);
      return { definition, created };
    });
    await this.publish(result.definition, result.created ? 'created' : 'updated');
    return result;
  }

  async merge(id: string, raw: Record<string, unknown>, guard?: DefinitionGuard): Promise<WriteResult> {
    const result = await this.lock.run('definitions', async () => {
      const existing = this.definitions.get(id);
      guard?.(existing);
      // Merged into the file as it is now: a hand edit not synced yet is kept, never clobbered.
      const disk = existing ? await this.onDisk(id) : undefined;
      const merged = { ...((disk?.state === 'changed' ? disk.raw : existing?.raw) ?? {}), ...raw };
      delete merged.handle;
      const definition = await this.buildForApi(merged, id, true);
      await this.storeDefinition(definition);
      return { definition, created: !existing };
    });
    await this.publish(result.definition, result.created ? 'created' : 'updated');
    return result;
  }

  dependentsOf(id: string): StreamDependents {
    const children: string[] = [];
    const relations: string[] = [];
    for (const definition of this.list()) {
      if (definition.id === id) continue;
      if (definition.extends === id) children.push(definition.id);
      for (const field of definition.fields) {
        const related = field.config.related;
        if (related === id || (Array.isArray(related) && related.includes(id))) relations.push(`${definition.id}.${field.handle}`);
      }
    }
    return { children, relations };
  }

  async remove(id: string, options: { guard?: DefinitionGuard; force?: boolean } = {}): Promise<boolean> {
    const removed = await this.lock.run('definitions', async () => {
      if (!this.definitions.has(id)) return false;
      // The precondition first (RFC 9110 evaluates it before the method): a stale If-Match is
      // a 412 whatever else would refuse the delete.
      options.guard?.(this.definitions.get(id));
      await this.onDisk(id);
      const { children, relations } = this.dependentsOf(id);
      // A child cannot be built without its parent, so children are never forced past;
      // relationships are (their values stay, their links are omitted).
      if (children.length > 0 || (relations.length > 0 && !options.force)) {
        throw new ValidationError([
          ...children.map((child) => ({ message: `Stream [${child}] extends [${id}]: delete or change it first.`, meta: { field: `${child}.extends`, rule: 'dependents' } })),
          ...(options.force ? [] : relations.map((at) => ({ message: `${at} relates to [${id}]: delete it first, or send ?force=true to keep its values without links.`, meta: { field: at, rule: 'dependents' } }))),
        ]);
      }
      await this.store!.remove(id);
      this.definitions.delete(id);
      this.storedJson.delete(id);
      this.troubleLog.degraded.delete(id);
      this.sorted = undefined;
      return true;
    });
    if (removed) await this.changed({ id, action: 'deleted', definition: null });
    return removed;
  }

  updateData(id: string, data: unknown): Promise<void> {
    return this.lock.run('definitions', async () => {
      const definition = this.definitions.get(id);
      // A stream deleted meanwhile stays deleted: its entries write fails instead of resurrecting it.
      if (!definition) throw new NotFoundError(`Stream [${id}] not found.`);
      // The other keys as they are on disk now (a hand edit not synced yet is kept).
      const disk = await this.onDisk(id);
      const raw = { ...(disk.state === 'changed' ? disk.raw : definition.raw), data };
      const file = await this.store!.save(id, raw);
      if (file) definition.file = file;
      // The data belongs to the `self` source, which already serves it: updated in place,
      // without a change event (that would make the source reload what it holds).
      definition.raw = raw;
      definition.data = data;
      this.storedJson.set(id, JSON.stringify(raw));
    });
  }

  async reload(id: string): Promise<void> {
    // A store that reads one definition records that this one (only) is now served.
    const items = this.store!.load ? [await this.store!.load(id)].filter((i) => i !== undefined) : await this.store!.loadAll();
    const item = items.find((i) => (i.raw.id ?? i.raw.handle ?? i.id) === id);
    if (!item) {
      if (this.definitions.delete(id)) {
        this.sorted = undefined;
        await this.changed({ id, action: 'deleted', definition: null });
      }
      return;
    }
    const existed = this.definitions.has(id);
    const definition = await this.builder.build({ raw: item.raw, id, file: item.file, parentOf: (p) => this.definitions.get(p) }, this);
    this.definitions.set(id, definition);
    this.storedJson.set(id, JSON.stringify(item.raw));
    this.sorted = undefined;
    await this.changed({ id, action: existed ? 'updated' : 'created', definition: definition as unknown as Record<string, unknown> });
  }

  /**
   * Live sync (issue #14): bring the definitions in line with the store's files after an
   * edit on disk (definition-sync.ts). `imports`: imported files that changed.
   */
  sync(imports: Iterable<string> = []): Promise<void> {
    return this.liveSync.sync(imports);
  }

  /** Definitions not served as they are on disk: `degraded` (last good version served) and `unserved` (waiting for a parent). */
  troubles(): { degraded: DefinitionTrouble[]; unserved: DefinitionTrouble[] } {
    return this.troubleLog.list();
  }

  /** Every file a definition imports, with the streams importing it (live sync watches them). */
  importsInUse(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const definition of this.definitions.values()) {
      for (const file of importedFiles(definition.raw, this.settings.root)) out.set(file, [...(out.get(file) ?? []), definition.id]);
    }
    return out;
  }

  /** The folder of the definition files, when the store is one (live sync watches it). */
  get storeFolder(): string | undefined {
    return this.store?.path;
  }

  async close(): Promise<void> {
    await this.liveSync.idle();
    await this.lock.idle();
    await this.store?.close?.();
  }

  /** The stored definition compared with what was last read or written (a 409 when it cannot be read). */
  private async onDisk(id: string): Promise<StoredState> {
    const stored = (await this.store!.state?.(id)) ?? { state: 'unchanged' };
    // The file still holds the edit live sync could not use (it parses, but is not a valid
    // definition): a write would replace it with the last good version plus the change.
    const trouble = this.troubleLog.degraded.get(id);
    if (stored.state === 'unchanged' && trouble !== undefined && this.definitions.has(id)) {
      throw new AppError(409, `The definition file of stream [${id}] holds an edit that is not served (${trouble.reason}); fix it before writing.`);
    }
    return stored;
  }

  /** Store durably and make it the current definition (under the lock). */
  private async storeDefinition(definition: StreamDefinition): Promise<void> {
    const file = await this.store!.save(definition.id, definition.raw);
    if (file) definition.file = file;
    this.definitions.set(definition.id, definition);
    this.storedJson.set(definition.id, JSON.stringify(definition.raw));
    this.troubleLog.degraded.delete(definition.id);
    this.troubleLog.orphans.delete(definition.id);
    this.sorted = undefined;
  }

  /** Tell the other plugins; children that extend it are rebuilt on the new parent. */
  private async publish(definition: StreamDefinition, action: 'created' | 'updated'): Promise<void> {
    await this.changed({ id: definition.id, action, definition: definition as unknown as Record<string, unknown> });
    if (action === 'updated') await this.rebuildChildren(definition.id);
  }

  private async rebuildChildren(parentId: string): Promise<void> {
    for (const child of [...this.definitions.values()].filter((d) => d.extends === parentId)) {
      try {
        const rebuilt = await this.builder.build(
          { raw: child.raw, id: child.id, file: child.file, parentOf: (p) => this.definitions.get(p) },
          this,
        );
        this.definitions.set(child.id, rebuilt);
        this.sorted = undefined;
        await this.changed({ id: child.id, action: 'updated', definition: rebuilt as unknown as Record<string, unknown> });
        await this.rebuildChildren(child.id);
      } catch (error) {
        this.logger.warn({ err: error, stream: child.id, parent: parentId }, 'child stream kept its previous definition: it does not build on the changed parent');
      }
    }
  }
}
