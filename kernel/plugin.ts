import type { DependencyContainer } from 'tsyringe';
import type { KernelConfig } from './config-schema.js';
import type { Hooks } from './hooks.js';
import type { Logger } from './logger.js';

/** What every lifecycle step of a plugin receives. */
export interface PluginContext<Options = Record<string, unknown>> {
  /** The kernel's container: resolve other plugins' tokens, register your own. */
  container: DependencyContainer;
  config: KernelConfig;
  /** This plugin's `options` from the config's `plugins` list ({} when none). */
  options: Options;
  /** Absolute application root. */
  root: string;
  /** A child logger named after the plugin. */
  logger: Logger;
  hooks: Hooks;
}

/** Milliseconds a lifecycle step may take before the kernel names the plugin as stuck. */
export interface PluginTimeouts {
  /** register and boot together (default 60 s). */
  boot?: number;
  /** shutdown (default 30 s; then the kernel logs it and shuts the next plugin down). */
  shutdown?: number;
}

/** The kernel's defaults; a plugin may declare its own, an operator's `plugins` entry wins. */
export const DEFAULT_PLUGIN_TIMEOUTS: Required<PluginTimeouts> = { boot: 60_000, shutdown: 30_000 };

/**
 * A plugin: a name, the plugins it requires, and up to three lifecycle steps.
 * - register: bind into the container and into other plugins' registries. No I/O.
 * - boot: open files and connections, load data, listen. Runs in dependency order.
 * - shutdown: flush and close. Runs in reverse order, even after a partial boot.
 */
export interface Plugin<Options = Record<string, unknown>> {
  name: string;
  requires?: string[];
  /** Optional JSON Schema for this plugin's `options` (validated with defaults before register). */
  optionsSchema?: Record<string, unknown>;
  /** Its own lifecycle time limits, when the defaults do not fit (a long data load, a slow connect). */
  timeouts?: PluginTimeouts;
  register?(context: PluginContext<Options>): void | Promise<void>;
  boot?(context: PluginContext<Options>): void | Promise<void>;
  shutdown?(context: PluginContext<Options>): void | Promise<void>;
}

/** Identity helper that gives an addon author type checking for the plugin object. */
export function definePlugin<Options = Record<string, unknown>>(plugin: Plugin<Options>): Plugin<Options> {
  return plugin;
}

export function isPlugin(value: unknown): value is Plugin {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Plugin).name === 'string' &&
    (value as Plugin).name.length > 0
  );
}
