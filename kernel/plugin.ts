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
