import { AppError, NotFoundError, type FileRoots, type FolderWatcher, type KernelConfig, type Logger, ExtensionLedger, type RegisterOptions } from '../../kernel/index.js';
import { fieldOf, keyNameOf, type StreamDefinition } from '../streams/index.js';
import { CachedSource } from './cache/cached-source.js';
import { MemoryCacheStore } from './cache/memory-cache-store.js';
import type { CacheStoreFactory, EntryReviver, ExternalChange, Source, SourceContext, SourceFactory, SourceRegistry, StorageTrouble } from './contracts.js';
import { MemorySource } from './memory-source.js';
import { SourceClosedError } from './source-errors.js';

const TYPE_NAME = /^[A-Za-z][A-Za-z0-9_.:-]*$/;

interface Opened {
  source: Source;
  fingerprint: string;
  /** The definition last asked for (the same object asks again on nearly every request). */
  definition: StreamDefinition;
}

/**
 * What a stream's source depends on: when any of it changes (definition.changed), the
 * source is rebuilt; any other change (a field's label) keeps the loaded entries.
 */
export function sourceFingerprint(definition: StreamDefinition): string {
  // Definitions are immutable values (a change builds a new object), and this runs on
  // every request: compute it once per definition object.
  let fingerprint = fingerprints.get(definition);
  if (fingerprint === undefined) {
    fingerprint = computeFingerprint(definition);
    fingerprints.set(definition, fingerprint);
  }
  return fingerprint;
}

const fingerprints = new WeakMap<StreamDefinition, string>();

function computeFingerprint(definition: StreamDefinition): string {
  const keyName = keyNameOf(definition);
  return JSON.stringify([
    definition.config.source,
    keyName,
    fieldOf(definition, keyName)?.type ?? null,
    definition.config.cache ?? null,
    definition.file ?? null,
    definition.config.source.type === 'self' || definition.config.source.type === 'collection' ? (definition.data ?? null) : null,
  ]);
}

export class SourceRegistryImpl implements SourceRegistry {
  private readonly factories = new Map<string, SourceFactory>();
  private readonly cacheStores = new Map<string, CacheStoreFactory>([['memory', () => new MemoryCacheStore(this.config.streams.caches.results_bytes)]]);
  private reviver: EntryReviver | undefined;
  private readonly sources = new Map<string, Opened>();
  /** Sources being retired, by stream: their writes finish before a replacement loads. */
  private readonly retiring = new Map<string, Promise<void>>();
  /** The definitions registry, once the plugin wired it (see SourceContext.definitions). */
  definitions?: SourceContext['definitions'];
  /** Live file sync (`streams.watch`): given to every source that reads files. */
  watcher?: FolderWatcher;
  /** The application's roots: links out of them are not followed (issue #27). */
  fileRoots?: FileRoots;
  private readonly externalListeners: Array<(stream: string, changes: ExternalChange[]) => void> = [];

  constructor(
    private readonly config: KernelConfig,
    private readonly root: string,
    private readonly logger: Logger,
    private readonly ledger: ExtensionLedger = new ExtensionLedger(),
  ) {}

  registerType(type: string, factory: SourceFactory, options?: RegisterOptions): void {
    if (!TYPE_NAME.test(type)) throw new Error(`invalid source type name "${type}"`);
    this.ledger.claim('source type', type, options);
    this.factories.set(type, factory);
  }

  hasType(type: string): boolean {
    return this.factories.has(type);
  }

  types(): string[] {
    return [...this.factories.keys()].sort();
  }

  hasCacheStore(name: string): boolean {
    return this.cacheStores.has(name);
  }

  cacheStoreNames(): string[] {
    return [...this.cacheStores.keys()].sort();
  }

  setReviver(reviver: EntryReviver): void {
    this.reviver = reviver;
  }

  registerCacheStore(name: string, factory: CacheStoreFactory, options?: RegisterOptions): void {
    this.ledger.claim('cache store', name, options);
    this.cacheStores.set(name, factory);
  }

  for(definition: StreamDefinition): Source {
    const current = this.sources.get(definition.id);
    if (current !== undefined && current.definition === definition) return current.source;
    const fingerprint = sourceFingerprint(definition);
    if (current && current.fingerprint === fingerprint) {
      current.definition = definition;
      return current.source;
    }
    if (current) this.retire(definition.id, current.source);
    const failed = this.failed.get(definition.id);
    if (failed !== undefined && failed.fingerprint === fingerprint) throw new NotFoundError(failed.message);
    let source: Source;
    try {
      source = this.create(definition);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw this.unserve(definition, fingerprint, error);
    }
    this.failed.delete(definition.id);
    this.sources.set(definition.id, { source, fingerprint, definition });
    return source;
  }

  /**
   * Streams whose source factory threw, by id, until redefined: answered 404 with the reason,
   * named by `/readyz`, while the node serves every other stream (one addon's broken source
   * type never takes the node down).
   */
  private readonly failed = new Map<string, { fingerprint: string; reason: string; message: string }>();

  private unserve(definition: StreamDefinition, fingerprint: string, error: unknown): NotFoundError {
    const type = definition.config.source?.type ?? this.config.streams.default_source;
    const reason = `its source (type "${type}"${this.ledgerOwner(type)}) could not be created: ${(error as Error)?.message ?? String(error)}`;
    const message = `Stream [${definition.id}] is not served: ${reason}.`;
    this.failed.set(definition.id, { fingerprint, reason, message });
    this.logger.error({ err: error, stream: definition.id, source_type: type }, `stream "${definition.id}" is not served: its source could not be created`);
    return new NotFoundError(message);
  }

  private ledgerOwner(type: string): string {
    const owner = this.ledger.owner('source type', type);
    return owner === undefined ? '' : `, plugin "${owner}"`;
  }

  /** Streams not served because their source could not be created (`/readyz` lists them). */
  unserved(): Array<{ stream: string; reason: string }> {
    return [...this.failed].map(([stream, { reason }]) => ({ stream, reason }));
  }

  /** Rebuild the source when the definition's source settings changed (else keep it). */
  async definitionChanged(id: string, definition: StreamDefinition | null): Promise<void> {
    this.failed.delete(id);
    const current = this.sources.get(id);
    if (!current) return;
    if (definition && sourceFingerprint(definition) === current.fingerprint) return;
    await this.release(id);
  }

  async release(stream: string): Promise<void> {
    const current = this.sources.get(stream);
    if (!current) return;
    this.sources.delete(stream);
    await this.retire(stream, current.source);
  }

  /** Set while the boot's load of every in-memory stream runs (see preload). */
  private preloading: Promise<void> | undefined;

  /**
   * Load the entries of every in-memory stream now, at boot, so no request pays for a
   * load (issue #16). Not awaited by the boot: the node listens (and /healthz answers)
   * while entries load; /readyz stays 503 until this resolves (`loading()`). Streams load in
   * parallel; a stream that fails is logged and retried by its next use, as before.
   */
  preload(definitions: StreamDefinition[]): Promise<void> {
    const started = performance.now();
    const jobs = definitions.map(async (definition) => {
      try {
        // A source that cannot be created is logged by `for` and its stream left unserved.
        const source = this.for(definition);
        if (!source.capabilities.inMemory) return 0;
        await source.open();
        return (await source.count([])) ?? 0;
      } catch (error) {
        // Closed meanwhile (shutdown, or the stream redefined): nothing went wrong.
        if (!(error instanceof SourceClosedError) && !this.failed.has(definition.id)) this.logger.error({ stream: definition.id, err: error }, 'the entries of a stream could not be loaded at boot');
        return 0;
      }
    });
    const done = Promise.all(jobs).then((counts) => {
      const entries = counts.reduce((a, b) => a + b, 0);
      this.logger.info({ streams: definitions.length, entries, ms: Math.round(performance.now() - started) }, 'ready: entries of every stream loaded');
    });
    this.preloading = done;
    return done.finally(() => {
      if (this.preloading === done) this.preloading = undefined;
    });
  }

  /** True while the boot's load runs (the node is not ready). */
  loading(): boolean {
    return this.preloading !== undefined;
  }

  /** Resolves once the boot's load is over (at once when none runs). */
  async whenLoaded(): Promise<void> {
    while (this.preloading) await this.preloading.catch(() => undefined);
  }

  opened(): Source[] {
    return [...this.sources.values()].map((o) => o.source);
  }

  onExternalChange(listener: (stream: string, changes: ExternalChange[]) => void): void {
    this.externalListeners.push(listener);
  }

  troubles(): StorageTrouble[] {
    const out: StorageTrouble[] = [];
    for (const [stream, { source }] of this.sources) {
      const inner = source instanceof CachedSource ? source.source : source;
      if (inner instanceof MemorySource) for (const trouble of inner.troubles()) out.push({ stream, ...trouble });
    }
    return out;
  }

  async closeAll(): Promise<void> {
    const all = [...this.sources.entries()];
    this.sources.clear();
    await Promise.all(all.map(([id, o]) => this.retire(id, o.source)));
    await Promise.all([...this.retiring.values()]);
  }

  private retire(stream: string, source: Source): Promise<void> {
    const before = this.retiring.get(stream) ?? Promise.resolve();
    const closing = before
      .then(() => source.close())
      .catch((error: unknown) => this.logger.error({ err: error, stream }, 'closing a source failed'));
    this.retiring.set(stream, closing);
    void closing.then(() => {
      if (this.retiring.get(stream) === closing) this.retiring.delete(stream);
    });
    return closing;
  }

  detached(definition: StreamDefinition): Source {
    const type = definition.config.source?.type ?? this.config.streams.default_source;
    const factory = this.factories.get(type);
    if (!factory) throw new AppError(500, `the source type "${type}" is not registered (known: ${this.types().join(', ')}).`);
    const source = factory({ definition, config: this.config, root: this.root, logger: this.logger.child({ stream: definition.id }), definitions: this.definitions });
    if (source instanceof MemorySource && this.reviver !== undefined) source.reviveWith(this.reviver);
    return source;
  }

  private create(definition: StreamDefinition): Source {
    const type = definition.config.source?.type ?? this.config.streams.default_source;
    const factory = this.factories.get(type);
    if (!factory) {
      throw new AppError(500, `Stream [${definition.id}] uses the source type "${type}", which is not registered (known: ${this.types().join(', ')}).`);
    }
    const source = factory({
      definition,
      config: this.config,
      root: this.root,
      logger: this.logger.child({ stream: definition.id }),
      after: this.retiring.get(definition.id),
      definitions: this.definitions,
    });
    if (source instanceof MemorySource) {
      source.limitCaches({ matchBytes: this.config.streams.caches.match_bytes, ordersBytes: this.config.streams.caches.orders_bytes });
      if (this.reviver !== undefined) source.reviveWith(this.reviver);
      if (this.watcher !== undefined) source.watchWith(this.watcher);
      source.limitFiles(this.config.streams.files.max_bytes, this.fileRoots);
    }
    const cache = definition.config.cache;
    let served = source;
    if (cache?.enabled) {
      const storeName = cache.store ?? 'memory';
      const store = this.cacheStores.get(storeName);
      if (!store) throw new AppError(500, `Stream [${definition.id}] uses the cache store "${storeName}", which is not registered.`);
      served = new CachedSource(source, store({ stream: definition.id }), cache.ttl);
    }
    served.onExternalChange?.((changes) => {
      for (const listener of this.externalListeners) listener(definition.id, changes);
    });
    return served;
  }
}
