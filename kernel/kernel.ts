import type { DependencyContainer } from 'tsyringe';
import { rootContainer } from './container.js';
import { configValidator, describeAjvError, primaryAjvError } from './ajv.js';
import type { KernelConfig } from './config-schema.js';
import { applyConfigSections } from './config-section.js';
import { ConfigError, PluginTimeoutError, pluginOfError, tagErrorWithPlugin, type PluginStep } from './errors.js';
import { Hooks, KERNEL_HOOKS, type HookListener } from './hooks.js';
import { createLogger, type Logger } from './logger.js';
import { DEFAULT_PLUGIN_TIMEOUTS, type Plugin, type PluginContext, type PluginFactory, type PluginTimeouts } from './plugin.js';
import { serviceId, type ServiceRef } from './service-ref.js';
import { loadPlugins, type LoadedPlugin } from './plugin-loader.js';
import { FileRoots } from './file-roots.js';
import { APP_ROOT, CONFIG, EXTENSIONS, FILE_ROOTS, HOOKS, KERNEL, LOGGER, STORAGE_HEALTH } from './tokens.js';
import { registerStorageHealth } from './tools/storage-health.js';
import { ExtensionLedger } from './extensions.js';
import { inBackground } from './tools/background.js';

export interface KernelOptions {
  logger?: Logger;
  /** Plugins given as objects or factories (tests, embedding), loaded after the configured ones. */
  plugins?: Array<Plugin | PluginFactory>;
  /** Defaults of the per-plugin lifecycle limits (a plugin's own and its `plugins` entry win). */
  timeouts?: PluginTimeouts;
}

/**
 * The microkernel: loads, wires, starts and stops plugins, and nothing else. Each
 * kernel owns a child container, so several kernels (tests) never share state.
 */
export class Kernel {
  readonly container: DependencyContainer;
  readonly hooks: Hooks;
  /** Who registered each named extension; closed once serving starts. */
  readonly extensions = new ExtensionLedger();
  private readonly storage: ReturnType<typeof registerStorageHealth>;
  readonly logger: Logger;
  private plugins: LoadedPlugin[] = [];
  private readonly contexts = new Map<string, PluginContext>();
  private booted: LoadedPlugin[] = [];
  /** Which plugin provides each service reference ("kernel" for the kernel's own), and the service. */
  private readonly providers = new Map<symbol, { plugin: string; service: unknown }>();
  private state: 'new' | 'booting' | 'running' | 'stopping' | 'stopped' = 'new';

  constructor(readonly config: KernelConfig, private readonly options: KernelOptions = {}) {
    this.logger = options.logger ?? createLogger(config.log.level);
    this.hooks = new Hooks({ strict: true, logger: this.logger });
    this.hooks.declare('kernel', KERNEL_HOOKS);
    this.container = rootContainer.createChildContainer();
    this.provide('kernel', CONFIG, config);
    this.provide('kernel', LOGGER, this.logger);
    this.provide('kernel', HOOKS, this.hooks);
    this.provide('kernel', APP_ROOT, config.root);
    this.provide('kernel', FILE_ROOTS, new FileRoots(config.data_folder === undefined ? [config.root] : [config.root, config.data_folder], this.logger));
    this.provide('kernel', KERNEL, this);
    this.provide('kernel', EXTENSIONS, this.extensions);
    this.storage = registerStorageHealth(config.data_folder === undefined ? [config.root] : [config.root, config.data_folder]);
    this.provide('kernel', STORAGE_HEALTH, this.storage.health);
  }

  get pluginNames(): string[] {
    return this.plugins.map((p) => p.plugin.name);
  }

  /** A service, from outside any plugin (tests, embedding): `kernel.get(HTTP_SERVER).url`. */
  get<T>(ref: ServiceRef<T>): T {
    const provided = this.providers.get(ref);
    if (provided === undefined) throw new Error(`no loaded plugin provides the service "${serviceId(ref)}"`);
    return provided.service as T;
  }

  /** An optional service from outside any plugin: undefined when no loaded plugin provides it. */
  find<T>(ref: ServiceRef<T>): T | undefined {
    return this.providers.get(ref)?.service as T | undefined;
  }

  private provide<T>(plugin: string, ref: ServiceRef<T>, service: T): void {
    const provider = this.providers.get(ref)?.plugin;
    if (provider !== undefined && provider !== plugin) {
      throw new ConfigError(`plugins "${provider}" and "${plugin}" both provide the service "${serviceId(ref)}"`, this.config.file ?? 'config', '/plugins');
    }
    this.providers.set(ref, { plugin, service });
    // Mirrored into the container for `container.resolve(TOKEN)` (addons, middleware factories);
    // tsyringe cannot hold a null service (an optional one, such as the folder watcher).
    if (service !== null && service !== undefined) this.container.registerInstance(ref, service);
  }

  /**
   * `context.use` of plugin `user`: its provider must be loaded and be the plugin itself,
   * the kernel, or among what `user` requires (directly or through them), since that is
   * what makes the provider register and boot first.
   */
  private use<T>(user: string, reach: ReadonlySet<string>, ref: ServiceRef<T>): T {
    const provided = this.providers.get(ref);
    if (provided === undefined) {
      throw new ConfigError(`plugin "${user}" uses the service "${serviceId(ref)}", which no loaded plugin provides`, this.config.file ?? 'config', '/plugins');
    }
    const provider = provided.plugin;
    if (provider !== user && provider !== 'kernel' && !reach.has(provider)) {
      throw new ConfigError(`plugin "${user}" uses the service "${serviceId(ref)}" of plugin "${provider}" without requiring it: add "${provider}" to its requires`, this.config.file ?? 'config', '/plugins');
    }
    return provided.service as T;
  }

  private undeclared(plugin: string, list: 'provides' | 'uses', ref: symbol): ConfigError {
    return new ConfigError(`plugin "${plugin}" ${list === 'provides' ? 'provides' : 'uses'} the service "${serviceId(ref)}" without declaring it: add it to its ${list}`, this.config.file ?? 'config', '/plugins');
  }

  /**
   * The declared service graph, checked before any `register` (Backstage resolves every
   * plugin's deps before any init): a reference declared by two providers, a used one no
   * loaded plugin declares to provide, or one whose provider is not among the user's
   * `requires` fails the boot naming the plugins. Requirement cycles are refused when the
   * plugins are ordered (plugin-loader). Plugins that declare nothing are checked at `use`.
   */
  private checkDeclaredServices(): void {
    const where = this.config.file ?? 'config';
    const declaredBy = new Map<symbol, string>([...this.providers].map(([ref, { plugin }]) => [ref, plugin]));
    for (const { plugin } of this.plugins) {
      for (const ref of plugin.provides ?? []) {
        const other = declaredBy.get(ref);
        if (other !== undefined && other !== plugin.name) throw new ConfigError(`plugins "${other}" and "${plugin.name}" both provide the service "${serviceId(ref)}"`, where, '/plugins');
        declaredBy.set(ref, plugin.name);
      }
    }
    for (const { plugin } of this.plugins) {
      const reach = this.requiredBy(plugin.name);
      for (const ref of plugin.uses ?? []) {
        const provider = declaredBy.get(ref);
        if (provider === undefined) {
          // An undeclared provider may still provide it in its register: only a plugin set
          // whose every member declares can be refused here for certain.
          if (this.plugins.every((p) => p.plugin.provides !== undefined)) {
            throw new ConfigError(`plugin "${plugin.name}" uses the service "${serviceId(ref)}", which no loaded plugin provides`, where, '/plugins');
          }
          continue;
        }
        if (provider !== plugin.name && provider !== 'kernel' && !reach.has(provider)) {
          throw new ConfigError(`plugin "${plugin.name}" uses the service "${serviceId(ref)}" of plugin "${provider}" without requiring it: add "${provider}" to its requires`, where, '/plugins');
        }
      }
    }
  }

  /** Every plugin `name` requires, directly or through the plugins it requires. */
  private requiredBy(name: string): Set<string> {
    const byName = new Map(this.plugins.map((p) => [p.plugin.name, p.plugin]));
    const reach = new Set<string>();
    const visit = (current: string): void => {
      for (const required of byName.get(current)?.requires ?? []) {
        if (reach.has(required)) continue;
        reach.add(required);
        visit(required);
      }
    };
    visit(name);
    return reach;
  }

  async boot(): Promise<void> {
    if (this.state !== 'new') throw new Error(`kernel cannot boot from state ${this.state}`);
    this.state = 'booting';
    this.plugins = await loadPlugins(this.config, this.options.plugins);
    applyConfigSections(this.config, this.plugins.flatMap(({ plugin }) => (plugin.settings ? [{ plugin: plugin.name, section: plugin.settings }] : [])));
    try {
      // Every hook is declared before any listener registers, so `on()` can refuse a typo.
      for (const { plugin } of this.plugins) if (plugin.emits) this.hooks.declare(plugin.name, plugin.emits);
      this.checkDeclaredServices();
    } catch (error) {
      this.state = 'stopped';
      throw error instanceof ConfigError && this.config.file !== undefined ? new ConfigError(error.problem, this.config.file, error.path) : error;
    }
    for (const loaded of this.plugins) {
      loaded.options = this.validateOptions(loaded);
      const name = loaded.plugin.name;
      const reach = this.requiredBy(name);
      const logger = this.logger.child({ plugin: loaded.plugin.name });
      const declared = loaded.plugin;
      const context: PluginContext = {
        provide: (ref, service) => {
          if (declared.provides !== undefined && !declared.provides.includes(ref)) throw this.undeclared(name, 'provides', ref);
          this.provide(name, ref, service);
        },
        use: (ref) => {
          // The kernel's own services (config, logger, file roots, extensions...) need no declaration.
          const provider = this.providers.get(ref)?.plugin;
          if (declared.uses !== undefined && !declared.uses.includes(ref) && provider !== name && provider !== 'kernel') throw this.undeclared(name, 'uses', ref);
          return this.use(name, reach, ref);
        },
        find: (ref) => this.find(ref),
        container: this.container,
        config: this.config,
        options: loaded.options,
        root: this.config.root,
        logger,
        hooks: this.hooks.forPlugin(loaded.plugin.name),
        background: (task, work) => inBackground(logger, task, work),
      };
      this.contexts.set(loaded.plugin.name, context);
    }
    try {
      for (const loaded of this.plugins) await this.step(loaded, 'register');
      // Every declared `uses` has its provider now (an undeclared provider registers it in its
      // own `register`): a `use` after boot cannot fail.
      for (const { plugin } of this.plugins) {
        for (const ref of plugin.uses ?? []) {
          if (!this.providers.has(ref)) throw new ConfigError(`plugin "${plugin.name}" uses the service "${serviceId(ref)}", which no loaded plugin provides`, this.config.file ?? 'config', '/plugins');
        }
      }
    } catch (error) {
      // Nothing booted, nothing to shut down (register does no I/O); the kernel is done.
      this.state = 'stopped';
      throw error;
    }
    try {
      for (const loaded of this.plugins) {
        // Recorded before boot so a half-booted plugin still gets its shutdown.
        this.booted.push(loaded);
        await this.step(loaded, 'boot');
      }
      // Serving starts: registries close, each plugin's `ready` runs (the transport listens),
      // then `kernel.booted`, every listener bounded by its plugin's boot limit and named when it fails.
      this.extensions.close();
      // Built only when it is logged: its sort by locale starts ICU's collator, ~8 ms of a boot (issue #33).
      if (this.logger.isLevelEnabled('debug')) {
        this.logger.debug({ extensions: this.extensions.list().map((r) => `${r.registry} ${r.name}: ${r.plugin}`), hooks: this.hooks.declared().map((h) => `${h.name} (${h.kind}): ${h.plugin}`) }, 'extensions registered');
      }
      for (const loaded of this.plugins) await this.step(loaded, 'ready');
      await this.lifecycleHook('kernel.booted', { plugins: this.pluginNames });
    } catch (error) {
      await this.shutdown().catch((e: unknown) => this.logger.error({ err: e }, 'shutdown after failed boot failed'));
      throw error;
    }
    this.state = 'running';
  }

  /** Shut plugins down in reverse boot order; one failing plugin does not stop the others. */
  async shutdown(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    // Drain first (the transport stops accepting and finishes what is in flight), then tell
    // `kernel.shutdown` listeners, then shut down; each bounded, one failure never stops the rest.
    for (const loaded of [...this.booted].reverse()) await this.stepLogged(loaded, 'drain');
    await this.lifecycleHook('kernel.shutdown', {});
    for (const loaded of [...this.booted].reverse()) await this.stepLogged(loaded, 'shutdown');
    this.booted = [];
    this.storage.release();
    this.state = 'stopped';
  }

  /** A shutdown-side step: its failure is logged naming the plugin, and the next plugin goes on. */
  private async stepLogged(loaded: LoadedPlugin, step: 'drain' | 'shutdown'): Promise<void> {
    try {
      await this.step(loaded, step);
    } catch (error) {
      this.logger.error({ err: error, plugin: loaded.plugin.name, step }, error instanceof PluginTimeoutError ? error.message : `plugin "${loaded.plugin.name}" failed in its ${step}`);
    }
  }

  /**
   * One lifecycle step of one plugin, bounded in time (as avvio does): a step that never
   * settles fails with a message naming the plugin instead of hanging the process. The
   * step itself cannot be cancelled; a timed-out boot is followed by the shutdown of
   * everything booted so far, and a timed-out shutdown by the next plugin's.
   */
  private async step(loaded: LoadedPlugin, step: 'register' | 'boot' | 'ready' | 'drain' | 'shutdown'): Promise<void> {
    const run = loaded.plugin[step];
    if (run === undefined) return;
    this.extensions.current = loaded.plugin.name;
    try {
      await this.bounded(loaded.plugin.name, step, this.limitOf(loaded, step), () => run.call(loaded.plugin, this.contexts.get(loaded.plugin.name)!));
    } catch (error) {
      // A listener's error already names its plugin; a plain lifecycle failure gets this one's.
      if (step !== 'shutdown' && step !== 'drain' && pluginOfError(error) === undefined && !(error instanceof PluginTimeoutError) && !(error instanceof ConfigError)) {
        this.logger.error({ err: error, plugin: loaded.plugin.name, step }, `plugin "${loaded.plugin.name}" failed in its ${step}`);
      }
      throw error;
    } finally {
      this.extensions.current = undefined;
    }
  }

  private limitOf(loaded: LoadedPlugin | undefined, step: PluginStep): number {
    const limits = { ...DEFAULT_PLUGIN_TIMEOUTS, ...this.options.timeouts, ...loaded?.plugin.timeouts, ...loaded?.timeouts };
    return step === 'shutdown' || step === 'drain' || step === 'kernel.shutdown' ? limits.shutdown : limits.boot;
  }

  private async bounded(plugin: string, step: PluginStep, ms: number, run: () => void | Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PluginTimeoutError(plugin, step, ms)), ms);
    });
    try {
      await Promise.race([run(), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The kernel's lifecycle hooks, one listener at a time, each bounded by its plugin's limit
   * (boot for `kernel.booted`, shutdown for `kernel.shutdown`) as a step of that plugin:
   * a `kernel.booted` listener that throws or hangs fails the boot naming its plugin; a
   * `kernel.shutdown` one is logged and the next listener runs.
   */
  private async lifecycleHook<K extends 'kernel.booted' | 'kernel.shutdown'>(name: K, payload: Parameters<HookListener<K>>[0]): Promise<void> {
    const byName = new Map(this.plugins.map((p) => [p.plugin.name, p]));
    for (const { listener, owner } of this.hooks.listenersOf(name)) {
      const plugin = owner ?? 'kernel';
      // A registration the listener attempts (refused: serving has started) names its plugin.
      this.extensions.current = owner;
      try {
        await this.bounded(plugin, name, this.limitOf(owner === undefined ? undefined : byName.get(owner), name), () => listener(payload));
      } catch (error) {
        if (owner !== undefined) tagErrorWithPlugin(error, owner);
        const message = error instanceof PluginTimeoutError ? error.message : `plugin "${plugin}" failed in its "${name}" listener`;
        if (name === 'kernel.shutdown') {
          this.logger.error({ err: error, plugin, hook: name }, message);
          continue;
        }
        if (!(error instanceof PluginTimeoutError)) this.logger.error({ err: error, plugin, hook: name }, message);
        throw error;
      } finally {
        this.extensions.current = undefined;
      }
    }
  }

  private validateOptions(loaded: LoadedPlugin): Record<string, unknown> {
    const schema = loaded.plugin.optionsSchema;
    if (!schema) return loaded.options;
    const options = structuredClone(loaded.options);
    const validate = configValidator(schema);
    if (!validate(options)) {
      const { path, message } = describeAjvError(primaryAjvError(validate.errors ?? []));
      throw new ConfigError(`options of plugin "${loaded.plugin.name}" ${path} ${message}`, this.config.file ?? 'config', '/plugins');
    }
    return options;
  }
}
