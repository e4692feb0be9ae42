import type { DependencyContainer } from 'tsyringe';
import type { KernelConfig } from './config-schema.js';
import type { HookKinds, Hooks } from './hooks.js';
import type { Logger } from './logger.js';
import type { ConfigSection } from './config-section.js';
import type { ServiceRef } from './service-ref.js';

/** What every lifecycle step of a plugin receives. */
export interface PluginContext<Options = Record<string, unknown>> {
  /**
   * Bind the service this plugin provides under `ref` (in `register`). A second plugin
   * providing the same reference fails the boot naming both.
   */
  provide<T>(ref: ServiceRef<T>, service: T): void;
  /**
   * The service another plugin provides, typed by its reference. Fails (naming this plugin,
   * the service and its provider) when no loaded plugin provides it, or when its provider is
   * not among the plugins this one `requires` (directly or through them): that is what
   * orders their lifecycles.
   */
  use<T>(ref: ServiceRef<T>): T;
  /**
   * An optional service: the one a loaded plugin provides, or undefined when none does. No
   * ordering comes with it (it is not in `requires`), so look it up when it is needed, not
   * in `register`.
   */
  find<T>(ref: ServiceRef<T>): T | undefined;
  /**
   * The kernel's tsyringe container, for code written before service references
   * (`container.resolve(TOKEN)` still works: a reference is that token). Prefer `use`.
   */
  container: DependencyContainer;
  config: KernelConfig;
  /** This plugin's `options` from the config's `plugins` list ({} when none). */
  options: Options;
  /** Absolute application root. */
  root: string;
  /** A child logger named after the plugin. */
  logger: Logger;
  hooks: Hooks;
  /**
   * Run work outside a request (a preload, a watcher callback, a retry): a failure is logged
   * naming this plugin and `task`, never an unhandled rejection. Resolves once it is over.
   */
  background(task: string, work: () => unknown): Promise<void>;
}

/** Milliseconds a lifecycle step may take before the kernel names the plugin as stuck. */
export interface PluginTimeouts {
  /** register, boot, ready and each `kernel.booted` listener, each (default 60 s). */
  boot?: number;
  /** drain, shutdown and each `kernel.shutdown` listener (default 30 s; then the kernel logs it and goes on). */
  shutdown?: number;
}

/** The kernel's defaults; a plugin may declare its own, an operator's `plugins` entry wins. */
export const DEFAULT_PLUGIN_TIMEOUTS: Required<PluginTimeouts> = { boot: 60_000, shutdown: 30_000 };

/**
 * A plugin: a name, the plugins it requires, the hooks it emits, and up to five lifecycle
 * steps, each bounded by the plugin's time limit (a step past it fails naming the plugin):
 * - register: bind into the container and into other plugins' registries. No I/O.
 * - boot: open files and connections, load data. Runs in dependency order.
 * - ready: once every plugin booted, in the same order: start serving (the transport listens
 *   here, as avvio's `onReady`). Registries are closed from here on.
 * - drain: first thing at shutdown, in reverse order: stop accepting, finish what is in flight.
 * - shutdown: flush and close. Runs in reverse order, even after a partial boot.
 */
export interface Plugin<Options = Record<string, unknown>> {
  name: string;
  requires?: string[];
  /**
   * The top-level config section this plugin owns (`defineSettings({ key, schema, resolve })`):
   * validated, defaults filled, when the plugins are loaded; a key no loaded plugin owns is refused.
   */
  settings?: ConfigSection<never>;
  /** Optional JSON Schema for this plugin's `options` (validated with defaults before register). */
  optionsSchema?: Record<string, unknown>;
  /** Its own lifecycle time limits, when the defaults do not fit (a long data load, a slow connect). */
  timeouts?: PluginTimeouts;
  /**
   * The hooks this plugin emits and their kinds (`{ 'entry.created': 'after' }`): declared
   * before any `register`, so a listener of an unknown hook is refused at `on()` and two
   * plugins declaring one hook fail the boot naming both. Type them in `HookMap` too.
   */
  emits?: HookKinds;
  /**
   * The service references this plugin `provide`s and `use`s (as Backstage's `deps`). When
   * declared, the kernel checks the whole graph before any `register` (a used service nobody
   * provides, one provided twice, a provider not among `requires`), naming the plugins, and
   * refuses a `provide`/`use` of an undeclared reference (the kernel's own services need no
   * declaration); so `use` cannot fail later.
   */
  provides?: ServiceRef<unknown>[];
  uses?: ServiceRef<unknown>[];
  register?(context: PluginContext<Options>): void | Promise<void>;
  boot?(context: PluginContext<Options>): void | Promise<void>;
  ready?(context: PluginContext<Options>): void | Promise<void>;
  drain?(context: PluginContext<Options>): void | Promise<void>;
  shutdown?(context: PluginContext<Options>): void | Promise<void>;
}

/**
 * A plugin made fresh for each kernel: its state lives in the factory's closure, so two
 * kernels in one process (tests, embedding) never share it.
 */
export type PluginFactory<Options = Record<string, unknown>> = () => Plugin<Options>;

/**
 * Identity helper that gives an addon author type checking for the plugin: an object, or a
 * factory (`definePlugin(() => { let state; return { name, register, boot } })`) that the
 * kernel calls once per kernel.
 */
// The factory overload first: a function has a `name` too, so it would match the object's.
export function definePlugin<Options = Record<string, unknown>>(factory: PluginFactory<Options>): PluginFactory<Options>;
export function definePlugin<Options = Record<string, unknown>>(plugin: Plugin<Options>): Plugin<Options>;
export function definePlugin<Options>(plugin: Plugin<Options> | PluginFactory<Options>): Plugin<Options> | PluginFactory<Options> {
  return plugin;
}

/** A plugin object from what a module exports (a plugin, or a factory of one); undefined if neither. */
export function instantiatePlugin(value: unknown): Plugin | undefined {
  const candidate = typeof value === 'function' ? (value as () => unknown)() : value;
  return isPlugin(candidate) ? candidate : undefined;
}

export function isPlugin(value: unknown): value is Plugin {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Plugin).name === 'string' &&
    (value as Plugin).name.length > 0
  );
}
