import {
  AppError,
  ConfigError,
  KeyedLock,
  NotFoundError,
  ValidationError,
  type ErrorElement,
  type Hooks,
  type Logger,
} from '../../kernel/index.js';
import type {
  DefinitionCheck,
  DefinitionGuard,
  DefinitionStore,
  DefinitionStoreFactory,
  StreamRegistry,
  WriteResult,
} from './contracts.js';
import { DefinitionBuilder, DefinitionProblems } from './definition-builder.js';
import type { StreamDefinition } from './types.js';

interface RegistrySettings {
  metaId: string;
  root: string;
  path: string;
  storeType: string;
  defaultSource: string;
  defaultFormat: string;
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
  private readonly definitions = new Map<string, StreamDefinition>();
  private sorted?: StreamDefinition[];
  private readonly builder: DefinitionBuilder;
  private readonly storeFactories = new Map<string, DefinitionStoreFactory>();
  private store?: DefinitionStore;
  private readonly lock = new KeyedLock();

  constructor(
    private readonly settings: RegistrySettings,
    private readonly hooks: Hooks,
    private readonly logger: Logger,
  ) {
    this.metaId = settings.metaId;
    this.builder = new DefinitionBuilder(settings.root, settings.path, hooks, {
      defaultSource: settings.defaultSource,
      defaultFormat: settings.defaultFormat,
    });
  }

  addCheck(check: DefinitionCheck): void {
    this.builder.checks.push(check);
  }

  registerStore(type: string, factory: DefinitionStoreFactory): void {
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
    if (!definition) throw new NotFoundError(`Stream [${id}] not found.`);
    return definition;
  }

  list(): StreamDefinition[] {
    this.sorted ??= [...this.definitions.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return this.sorted;
  }

  /** Boot: choose the store, collect addon schema, load every definition (parents first). */
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
    const items = await this.store.loadAll();
    const pending = new Map<string, { raw: Record<string, unknown>; file?: string }>();
    for (const item of items) {
      const id = (item.raw.id ?? item.raw.handle ?? item.id) as string | undefined;
      if (id === undefined) throw new ConfigError('a stream definition needs an id', item.file, '/id');
      if (pending.has(id)) {
        throw new ConfigError(`stream id [${id}] is also defined in ${pending.get(id)!.file ?? 'another definition'}`, item.file, '/id');
      }
      if (id === this.metaId) throw new ConfigError(`stream id [${id}] is reserved for the meta-stream`, item.file, '/id');
      pending.set(id, item);
    }
    const building = new Set<string>();
    const buildOne = async (id: string): Promise<StreamDefinition> => {
      const done = this.definitions.get(id);
      if (done) return done;
      const item = pending.get(id)!;
      building.add(id);
      const parentId = item.raw.extends;
      if (typeof parentId === 'string' && pending.has(parentId) && !this.definitions.has(parentId)) {
        if (building.has(parentId)) {
          throw new ConfigError(`extends [${parentId}], which extends [${id}]: a cycle`, item.file, '/extends');
        }
        await buildOne(parentId);
      }
      try {
        const definition = await this.builder.build({ raw: item.raw, id, file: item.file, parentOf: (p) => this.definitions.get(p) }, this);
        this.definitions.set(id, definition);
        return definition;
      } catch (error) {
        if (error instanceof DefinitionProblems) throw asConfigError(error, item.file ?? this.settings.path);
        throw error;
      } finally {
        building.delete(id);
      }
    };
    for (const id of pending.keys()) await buildOne(id);
    this.sorted = undefined;
    if (this.store.watch) await this.store.watch((id) => void this.reload(id).catch((e: unknown) => this.logger.error({ err: e, id }, 'reload failed')));
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
      if (this.definitions.has(built.id)) {
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
      const body = { ...raw };
      delete body.handle;
      // A PUT without `data` replaces the definition, not the entries a `self` stream keeps
      // in it (docs/sources.md); sending `data` (even []) replaces them.
      if (!Object.hasOwn(body, 'data') && existing?.raw.data !== undefined) body.data = existing.raw.data;
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
      const merged = { ...(existing?.raw ?? {}), ...raw };
      delete merged.handle;
      const definition = await this.buildForApi(merged, id, true);
      await this.storeDefinition(definition);
      return { definition, created: !existing };
    });
    await this.publish(result.definition, result.created ? 'created' : 'updated');
    return result;
  }

  dependentsOf(id: string): string[] {
    const out: string[] = [];
    for (const definition of this.list()) {
      if (definition.id === id) continue;
      if (definition.extends === id) out.push(`${definition.id}.extends`);
      for (const field of definition.fields) {
        const related = field.config.related;
        if (related === id || (Array.isArray(related) && related.includes(id))) out.push(`${definition.id}.${field.handle}`);
      }
    }
    return out;
  }

  async remove(id: string, options: { guard?: DefinitionGuard; force?: boolean } = {}): Promise<boolean> {
    const removed = await this.lock.run('definitions', async () => {
      if (!this.definitions.has(id)) return false;
      options.guard?.(this.definitions.get(id));
      if (!options.force) {
        const dependents = this.dependentsOf(id);
        if (dependents.length > 0) {
          throw new AppError(
            409,
            `Stream [${id}] is referenced by ${dependents.join(', ')}; change those first or delete with ?force=true.`,
            dependents.map((d) => ({ message: `Stream [${id}] is referenced by ${d}.`, meta: { field: d, rule: 'referenced' } })),
          );
        }
      }
      await this.store!.remove(id);
      this.definitions.delete(id);
      this.sorted = undefined;
      return true;
    });
    if (removed) await this.hooks.emit('definition.changed', { id, action: 'deleted', definition: null });
    return removed;
  }

  updateData(id: string, data: unknown): Promise<void> {
    return this.lock.run('definitions', async () => {
      const definition = this.definitions.get(id);
      // A stream deleted meanwhile stays deleted: its entries write fails instead of resurrecting it.
      if (!definition) throw new NotFoundError(`Stream [${id}] not found.`);
      const raw = { ...definition.raw, data };
      const file = await this.store!.save(id, raw);
      if (file) definition.file = file;
      // The data belongs to the `self` source, which already serves it: updated in place,
      // without a change event (that would make the source reload what it holds).
      definition.raw = raw;
      definition.data = data;
    });
  }

  async reload(id: string): Promise<void> {
    const items = await this.store!.loadAll();
    const item = items.find((i) => (i.raw.id ?? i.raw.handle ?? i.id) === id);
    if (!item) {
      if (this.definitions.delete(id)) {
        this.sorted = undefined;
        await this.hooks.emit('definition.changed', { id, action: 'deleted', definition: null });
      }
      return;
    }
    const existed = this.definitions.has(id);
    const definition = await this.builder.build({ raw: item.raw, id, file: item.file, parentOf: (p) => this.definitions.get(p) }, this);
    this.definitions.set(id, definition);
    this.sorted = undefined;
    await this.hooks.emit('definition.changed', { id, action: existed ? 'updated' : 'created', definition: definition as unknown as Record<string, unknown> });
  }

  async close(): Promise<void> {
    await this.lock.idle();
    await this.store?.close?.();
  }

  /** Store durably and make it the current definition (under the lock). */
  private async storeDefinition(definition: StreamDefinition): Promise<void> {
    const file = await this.store!.save(definition.id, definition.raw);
    if (file) definition.file = file;
    this.definitions.set(definition.id, definition);
    this.sorted = undefined;
  }

  /** Tell the other plugins; children that extend it are rebuilt on the new parent. */
  private async publish(definition: StreamDefinition, action: 'created' | 'updated'): Promise<void> {
    await this.hooks.emit('definition.changed', { id: definition.id, action, definition: definition as unknown as Record<string, unknown> });
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
        await this.hooks.emit('definition.changed', { id: child.id, action: 'updated', definition: rebuilt as unknown as Record<string, unknown> });
        await this.rebuildChildren(child.id);
      } catch (error) {
        this.logger.warn({ err: error, stream: child.id, parent: parentId }, 'child stream kept its previous definition: it does not build on the changed parent');
      }
    }
  }
}
