import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KernelConfig } from './config-schema.js';
import { CORE_PLUGINS, DEFAULT_PLUGINS } from './core-plugins.js';
import { ConfigError } from './errors.js';
import { instantiatePlugin, type Plugin, type PluginFactory, type PluginTimeouts } from './plugin.js';

export interface LoadedPlugin {
  plugin: Plugin;
  options: Record<string, unknown>;
  /** Where it came from: a core name, a path or a package name (for messages). */
  source: string;
  /** The operator's `boot_timeout_ms`/`shutdown_timeout_ms` of its `plugins` entry, if any. */
  timeouts?: PluginTimeouts;
}

interface WantedPlugin {
  spec: string;
  options: Record<string, unknown>;
  enabled: boolean;
  index: number;
  timeouts: PluginTimeouts;
}

/** Collect the wanted plugins: the defaults, then the config's list (a repeated name merges options). */
function wantedPlugins(config: KernelConfig): WantedPlugin[] {
  const wanted = new Map<string, WantedPlugin>();
  for (const name of DEFAULT_PLUGINS) wanted.set(name, { spec: name, options: {}, enabled: true, index: -1, timeouts: {} });
  // A section turns its optional core plugin on (the section alone says what is wanted).
  if ((config as unknown as Record<string, unknown>).access !== undefined) wanted.set('access', { spec: 'access', options: {}, enabled: true, index: -1, timeouts: {} });
  config.plugins.forEach((entry, index) => {
    const item = typeof entry === 'string' ? { name: entry } : entry;
    const previous = wanted.get(item.name);
    wanted.set(item.name, {
      spec: item.name,
      options: { ...(previous?.options ?? {}), ...(item.options ?? {}) },
      enabled: item.enabled ?? true,
      index,
      timeouts: {
        ...previous?.timeouts,
        ...('boot_timeout_ms' in item && item.boot_timeout_ms !== undefined ? { boot: item.boot_timeout_ms } : {}),
        ...('shutdown_timeout_ms' in item && item.shutdown_timeout_ms !== undefined ? { shutdown: item.shutdown_timeout_ms } : {}),
      },
    });
  });
  return [...wanted.values()].filter((w) => w.enabled);
}

/** The entry module of a folder: package.json `exports["."]`, then `main`, then index.js. */
function folderEntry(folder: string): string {
  const manifest = path.join(folder, 'package.json');
  if (existsSync(manifest)) {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: string };
    const exp = pkg.exports;
    let target: unknown = typeof exp === 'object' && exp !== null && '.' in exp ? (exp as Record<string, unknown>)['.'] : exp;
    if (target && typeof target === 'object') {
      const conditions = target as Record<string, unknown>;
      target = conditions.import ?? conditions.default ?? conditions.node;
    }
    if (typeof target === 'string') return path.resolve(folder, target);
    if (pkg.main) return path.resolve(folder, pkg.main);
  }
  return path.join(folder, 'index.js');
}

/** Find an installed package by walking up node_modules folders from the app root, as Node does. */
function findPackage(name: string, from: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function resolveSpec(spec: string, root: string, configFile?: string): string {
  if (CORE_PLUGINS[spec]) return new URL(CORE_PLUGINS[spec], import.meta.url).href;
  const where = configFile ?? 'config';
  if (spec.startsWith('.') || path.isAbsolute(spec)) {
    const target = path.resolve(root, spec);
    if (!existsSync(target)) throw new ConfigError(`plugin "${spec}" not found at ${target}`, where, '/plugins');
    const file = statSync(target).isDirectory() ? folderEntry(target) : target;
    return pathToFileURL(file).href;
  }
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(spec)) {
    throw new ConfigError(`"${spec}" is neither a core plugin, a path nor a package name`, where, '/plugins');
  }
  const folder = findPackage(spec, root);
  if (!folder) {
    throw new ConfigError(
      `plugin "${spec}" is not a core plugin (${Object.keys(CORE_PLUGINS).join(', ')}) and no package of that name is installed under ${root}`,
      where,
      '/plugins',
    );
  }
  return pathToFileURL(folderEntry(folder)).href;
}

async function importPlugin(spec: string, url: string, where: string): Promise<Plugin> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`plugin "${spec}" failed to load: ${(error as Error).message}`, where, '/plugins');
  }
  let plugin: Plugin | undefined;
  try {
    plugin = instantiatePlugin(mod.default ?? mod.plugin);
  } catch (error) {
    throw new ConfigError(`plugin "${spec}" failed to load: its factory threw ${(error as Error).message}`, where, '/plugins');
  }
  if (plugin === undefined) {
    throw new ConfigError(`plugin "${spec}" must export a plugin object, or a function returning one (default export or "plugin"), with a name`, where, '/plugins');
  }
  return plugin;
}

/**
 * Order plugins so each comes after what it requires (a stable topological sort:
 * among independent plugins the listed order is kept). Missing or cyclic requirements
 * are boot errors naming the plugins involved.
 */
export function orderPlugins(plugins: LoadedPlugin[], where = 'config'): LoadedPlugin[] {
  const byName = new Map(plugins.map((p) => [p.plugin.name, p]));
  for (const p of plugins) {
    for (const required of p.plugin.requires ?? []) {
      if (!byName.has(required)) {
        throw new ConfigError(`plugin "${p.plugin.name}" requires "${required}", which is not loaded`, where, '/plugins');
      }
    }
  }
  const ordered: LoadedPlugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: LoadedPlugin, trail: string[]): void => {
    const name = p.plugin.name;
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(name)), name].join(' -> ');
      throw new ConfigError(`plugin requirements form a cycle: ${cycle}`, where, '/plugins');
    }
    state.set(name, 'visiting');
    for (const required of p.plugin.requires ?? []) visit(byName.get(required)!, [...trail, name]);
    state.set(name, 'done');
    ordered.push(p);
  };
  for (const p of plugins) visit(p, []);
  return ordered;
}

/** Resolve, import and order every plugin the config asks for. */
export async function loadPlugins(config: KernelConfig, extra: Array<Plugin | PluginFactory> = []): Promise<LoadedPlugin[]> {
  const where = config.file ?? 'config';
  const loaded: LoadedPlugin[] = [];
  const seen = new Set<string>();
  for (const wanted of wantedPlugins(config)) {
    const plugin = await importPlugin(wanted.spec, resolveSpec(wanted.spec, config.root, config.file), where);
    if (seen.has(plugin.name)) throw new ConfigError(`two plugins are named "${plugin.name}"`, where, '/plugins');
    seen.add(plugin.name);
    loaded.push({ plugin, options: wanted.options, source: wanted.spec, timeouts: wanted.timeouts });
  }
  for (const given of extra) {
    const plugin = instantiatePlugin(given);
    if (plugin === undefined) throw new ConfigError('an inline plugin must be a plugin object, or a function returning one, with a name', where, '/plugins');
    if (seen.has(plugin.name)) throw new ConfigError(`two plugins are named "${plugin.name}"`, where, '/plugins');
    seen.add(plugin.name);
    loaded.push({ plugin, options: {}, source: 'inline', timeouts: {} });
  }
  return orderPlugins(loaded, where);
}
