import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { configValidator, describeAjvError, primaryAjvError } from './ajv.js';
import type { KernelConfig } from './config-schema.js';
import { applyConfigSections } from './config-section.js';
import { ConfigError, PluginTimeoutError, pluginOfError } from './errors.js';
import { Hooks } from './hooks.js';
import { createLogger, type Logger } from './logger.js';
import { DEFAULT_PLUGIN_TIMEOUTS, type Plugin, type PluginContext, type PluginFactory, type PluginTimeouts } from './plugin.js';
import { serviceId, type ServiceRef } from './service-ref.js';
import { loadPlugins, type LoadedPlugin } from './plugin-loader.js';
import { FileRoots } from './file-roots.js';
import { APP_ROOT, CONFIG, FILE_ROOTS, HOOKS, KERNEL, LOGGER } from './tokens.js';

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
  readonly hooks = new Hooks();
  readonly logger: Logger;
  private plugins: LoadedPlugin[] = [];
  private readonly contexts = new Map<string, PluginContext>();
  private booted: LoadedPlugin[] = [];
  /** Which plugin provides each service reference ("kernel" for the kernel's own), and the service. */
  private readonly providers = new Map<symbol, { plugin: string; service: unknown }>();
  private state: 'new' | 'booting' | 'running' | 'stopping' | 'stopped' = 'new';

  constructor(readonly config: KernelConfig, private readonly options: KernelOptions = {}) {
    this.logger = options.logger ?? createLogger(config.log.level);
    this.container = rootContainer.createChildContainer();
    this.provide('kernel', CONFIG, config);
    this.provide('kernel', LOGGER, this.logger);
    this.provide('kernel', HOOKS, this.hooks);
    this.provide('kernel', APP_ROOT, config.root);
    this.provide('kernel', FILE_ROOTS, new FileRoots(config.data_folder === undefined ? [config.root] : [config.root, config.data_folder], this.logger));
    this.provide('kernel', KERNEL, this);
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
    for (const loaded of this.plugins) {
      loaded.options = this.validateOptions(loaded);
      const name = loaded.plugin.name;
      const reach = this.requiredBy(name);
      const context: PluginContext = {
        provide: (ref, service) => this.provide(name, ref, service),
        use: (ref) => this.use(name, reach, ref),
        find: (ref) => this.find(ref),
        container: this.container,
        config: this.config,
        options: loaded.options,
        root: this.config.root,
        logger: this.logger.child({ plugin: loaded.plugin.name }),
        hooks: this.hooks.forPlugin(loaded.plugin.name),
      };
      this.contexts.set(loaded.plugin.name, context);
    }
    try {
      for (const loaded of this.plugins) await this.step(loaded, 'register');
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
    } catch (error) {
      await this.shutdown().catch((e: unknown) => this.logger.error({ err: e }, 'shutdown after failed boot failed'));
      throw error;
    }
    this.state = 'running';
    await this.hooks.emit('kernel.booted', { plugins: this.pluginNames });
  }

  /** Shut plugins down in reverse boot order; one failing plugin does not stop the others. */
  async shutdown(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    await this.hooks.emit('kernel.shutdown', {}).catch((e: unknown) => this.logger.error({ err: e }, 'shutdown hook failed'));
    for (const loaded of [...this.booted].reverse()) {
      try {
        await this.step(loaded, 'shutdown');
      } catch (error) {
        this.logger.error({ err: error, plugin: loaded.plugin.name }, error instanceof PluginTimeoutError ? error.message : 'plugin shutdown failed');
      }
    }
    this.booted = [];
    this.state = 'stopped';
  }

  /**
   * One lifecycle step of one plugin, bounded in time (as avvio does): a step that never
   * settles fails with a message naming the plugin instead of hanging the process. The
   * step itself cannot be cancelled; a timed-out boot is followed by the shutdown of
   * everything booted so far, and a timed-out shutdown by the next plugin's.
   */
  private async step(loaded: LoadedPlugin, step: 'register' | 'boot' | 'shutdown'): Promise<void> {
    const run = loaded.plugin[step];
    if (run === undefined) return;
    const limits = { ...DEFAULT_PLUGIN_TIMEOUTS, ...this.options.timeouts, ...loaded.plugin.timeouts, ...loaded.timeouts };
    const ms = step === 'shutdown' ? limits.shutdown : limits.boot;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PluginTimeoutError(loaded.plugin.name, step, ms)), ms);
    });
    try {
      await Promise.race([run.call(loaded.plugin, this.contexts.get(loaded.plugin.name)!), expired]);
    } catch (error) {
      // A listener's error already names its plugin; a plain lifecycle failure gets this one's.
      if (step !== 'shutdown' && pluginOfError(error) === undefined && !(error instanceof PluginTimeoutError) && !(error instanceof ConfigError)) {
        this.logger.error({ err: error, plugin: loaded.plugin.name, step }, `plugin "${loaded.plugin.name}" failed in its ${step}`);
      }
      throw error;
    } finally {
      clearTimeout(timer);
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
