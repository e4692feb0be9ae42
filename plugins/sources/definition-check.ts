import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { KernelConfig } from '../../kernel/index.js';
import type { CheckContext, DefinitionProblem, StreamDefinition, StreamRegistry } from '../streams/index.js';
import type { SourceRegistry } from './contracts.js';
import { CODECS } from './filebase/formats.js';
import { isInside } from './paths.js';

/**
 * Source settings checked when a definition is loaded or written, so a bad definition
 * is refused (boot error or 409) instead of failing at its first request.
 */
/** The real path of `target` (symlinks of its existing part resolved), so a link cannot lead a path out. */
function realResolve(target: string): string {
  let existing = target;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) return target;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  return path.join(realpathSync(existing), ...rest);
}

/**
 * What a source path may never point at, whoever wrote the definition: the config file
 * and its folder, the definitions folder (entries there would be read as definitions)
 * and the installation. `folder` paths also may not contain any of those.
 */
function forbiddenTarget(key: 'path' | 'file', target: string, definition: StreamDefinition, config: KernelConfig, root: string): string | undefined {
  const real = (p: string): string => realResolve(p);
  const definitions = real(config.streams.path);
  const configFolder = config.file ? real(path.dirname(config.file)) : undefined;
  for (const name of ['node_modules', 'dist', '.git']) {
    if (isInside(real(path.join(root, name)), target)) return `must not point into ${name}/`;
  }
  if (key === 'path') {
    if (isInside(target, definitions)) return 'must not be (or contain) the definitions folder';
    if (configFolder && isInside(target, configFolder)) return 'must not be (or contain) the folder of the config file';
    return undefined;
  }
  if (config.file && target === real(config.file)) return 'must not be the config file';
  if (path.dirname(target) === definitions && !(definition.file && target === real(definition.file))) return 'must not be a definition file';
  return undefined;
}

export function checkSourceConfig(
  definition: StreamDefinition,
  sources: SourceRegistry,
  config: KernelConfig,
  registry?: StreamRegistry,
  context: CheckContext = { origin: 'store' },
): DefinitionProblem[] {
  const root = config.root;
  const problems: DefinitionProblem[] = [];
  const source = definition.config.source;
  // Over the API a stream gets storage of its own: never a file or folder another stream
  // uses (it could read or destroy that stream's data around its rules).
  if (context.origin === 'api' && registry) {
    const mine = storageOf(definition, config, root);
    if (mine !== undefined) {
      for (const other of registry.list()) {
        if (other.id === definition.id) continue;
        const theirs = storageOf(other, config, root);
        if (theirs !== undefined && (isInside(theirs, mine) || isInside(mine, theirs))) {
          const key = typeof source?.path === 'string' ? 'path' : typeof source?.file === 'string' ? 'file' : 'type';
          problems.push({ path: `/config/source/${key}`, message: `would share the storage of stream [${other.id}] (${path.relative(root, theirs) || '.'}); choose a path no other stream uses` });
          break;
        }
      }
    }
  }
  const indexes = definition.config.indexes;
  if (Array.isArray(indexes)) {
    indexes.forEach((item: unknown, i) => {
      const field = typeof item === 'string' ? item : (item as { field?: unknown } | null)?.field;
      const head = typeof field === 'string' ? field.split('.')[0] : undefined;
      if (head !== undefined && !definition.fields.some((f) => f.handle === head)) {
        problems.push({ path: `/config/indexes/${i}`, message: `indexes field "${field}", which the stream does not declare` });
      }
    });
  }
  const cache = definition.config.cache;
  if (cache?.enabled && typeof cache.store === 'string' && !sources.hasCacheStore(cache.store)) {
    problems.push({ path: '/config/cache/store', message: `unknown cache store "${cache.store}" (known: ${sources.cacheStoreNames().join(', ')})` });
  }
  if (!source || typeof source.type !== 'string') return problems;
  if (!sources.hasType(source.type)) {
    problems.push({ path: '/config/source/type', message: unknownTypeMessage(source.type, sources) });
  }
  for (const key of ['path', 'file'] as const) {
    const value = source[key];
    if (typeof value !== 'string') continue;
    const target = value.includes('\0') ? undefined : realResolve(path.resolve(root, value));
    if (target === undefined || !isInside(realResolve(root), target)) {
      problems.push({ path: `/config/source/${key}`, message: 'must stay inside the application root' });
      continue;
    }
    const forbidden = forbiddenTarget(key, target, definition, config, root);
    if (forbidden) {
      problems.push({ path: `/config/source/${key}`, message: forbidden });
      continue;
    }
    // Over the API a new or changed path must stay in the data folder: a client able to
    // write definitions must not turn any file of the application into entries.
    const current = registry?.get(definition.id)?.config.source[key];
    if (context.origin === 'api' && current !== value && !isInside(realResolve(config.streams.data_path), target)) {
      problems.push({
        path: `/config/source/${key}`,
        message: `must stay inside the data folder (${path.relative(root, config.streams.data_path) || '.'}) when set over the API`,
      });
    }
  }
  const format = source.format;
  if (typeof format === 'string') {
    if (source.type === 'filebase' && !CODECS[format]) {
      problems.push({ path: '/config/source/format', message: `filebase reads ${Object.keys(CODECS).join(', ')}, not "${format}"` });
    }
    if (source.type === 'file' && format !== 'json' && format !== 'csv') {
      problems.push({ path: '/config/source/format', message: `the file source reads json or csv, not "${format}"` });
    }
  }
  return problems;
}

/** Source types of Laravel Streams that this server does not implement (the schema accepts their names). */
const NOT_IMPLEMENTED = new Set(['filesystem', 'eloquent', 'scout', 'search']);

function unknownTypeMessage(type: string, sources: SourceRegistry): string {
  const known = sources.types().join(', ');
  if (type === 'database') return `source type "database" needs the MongoDB plugin: add "mongodb" to "plugins" in the config (see docs/mongodb.md); loaded types: ${known}`;
  if (NOT_IMPLEMENTED.has(type)) return `source type "${type}" is a Laravel Streams type this server does not implement; use one of: ${known}`;
  return `unknown source type "${type}" (known: ${known})`;
}

/**
 * Where a stream's entries live on disk (its folder or file), resolved through symlinks;
 * undefined for sources without storage of their own (self, collection, database...).
 */
export function storageOf(definition: StreamDefinition, config: KernelConfig, root: string): string | undefined {
  const source = definition.config.source ?? {};
  const type = typeof source.type === 'string' ? source.type : config.streams.default_source;
  if (type === 'filebase') {
    return realResolve(typeof source.path === 'string' && source.path !== '' ? path.resolve(root, source.path) : path.join(config.streams.data_path, definition.id));
  }
  if (type === 'file') {
    if (typeof source.file === 'string' && source.file !== '') return realResolve(path.resolve(root, source.file));
    const format = typeof source.format === 'string' ? source.format : 'json';
    return realResolve(path.join(config.streams.data_path, `${definition.id}.${format}`));
  }
  return undefined;
}
