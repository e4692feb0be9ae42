import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createAjv, describeAjvError, primaryAjvError } from './ajv.js';
import { configSchema, type KernelConfig } from './config-schema.js';
import { ConfigError } from './errors.js';
import { stripBom } from './text-files.js';

export interface ConfigOverrides {
  port?: number;
  host?: string;
  logLevel?: KernelConfig['log']['level'];
  transport?: KernelConfig['http']['transport'];
  portFallback?: boolean;
  /** Serve a working copy of the application's streams folder from this folder (see `useDataFolder`). */
  data?: string;
}

const validate = createAjv({ useDefaults: true }).compile(configSchema);

/** Read, validate and complete a config file; relative paths resolve against its folder. */
export function loadConfigFile(file: string, overrides: ConfigOverrides = {}): KernelConfig {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = stripBom(readFileSync(absolute, 'utf8'));
  } catch (error) {
    throw new ConfigError(`cannot read config file (${(error as NodeJS.ErrnoException).code ?? String(error)})`, absolute);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`is not valid JSON: ${(error as Error).message}`, absolute);
  }
  return buildConfig(raw, path.dirname(absolute), overrides, absolute);
}

/**
 * Validate a config object (from a file or built in a test) and resolve its paths.
 * `baseDir` plays the role of the config file's folder.
 */
export function buildConfig(raw: unknown, baseDir: string, overrides: ConfigOverrides = {}, file?: string): KernelConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError('must be a JSON object', file, '/');
  }
  const copy = structuredClone(raw) as Record<string, unknown>;
  if (!validate(copy)) {
    const error = primaryAjvError(validate.errors ?? []);
    const { path: where, message } = describeAjvError(error);
    throw new ConfigError(message, file ?? 'config', where);
  }
  const config = copy as unknown as KernelConfig;
  config.root = path.resolve(baseDir, config.root ?? '.');
  config.file = file;
  config.streams.path = path.resolve(config.root, config.streams.path);
  config.streams.data_path = path.resolve(config.root, config.streams.data_path);
  if (overrides.port !== undefined) config.http.port = overrides.port;
  if (overrides.host !== undefined) config.http.host = overrides.host;
  if (overrides.logLevel !== undefined) config.log.level = overrides.logLevel;
  if (overrides.transport !== undefined) config.http.transport = overrides.transport;
  if (overrides.portFallback !== undefined) config.http.port_fallback = overrides.portFallback;
  if (overrides.data !== undefined) useDataFolder(config, path.resolve(overrides.data));
  return config;
}

/**
 * `--data <folder>`: serve a working copy, so trying the server (the README tour) never
 * writes into the application's own tree. The first boot copies the definitions folder
 * (with its data, when the data folder lives inside it) into `<folder>/streams`; later
 * boots use what is there. Only the streams and data paths move: the config, plugins and
 * the application root stay where they are.
 */
export function useDataFolder(config: KernelConfig, folder: string): void {
  const streams = path.join(folder, 'streams');
  const dataInside = isInside(config.streams.path, config.streams.data_path);
  const data = dataInside ? path.join(streams, path.relative(config.streams.path, config.streams.data_path)) : path.join(folder, 'data');
  if (!existsSync(streams)) {
    mkdirSync(folder, { recursive: true });
    try {
      cpSync(config.streams.path, streams, { recursive: true, errorOnExist: true });
      if (!dataInside && existsSync(config.streams.data_path)) cpSync(config.streams.data_path, data, { recursive: true, errorOnExist: true });
    } catch (error) {
      throw new ConfigError(`cannot copy the application into --data ${folder}: ${(error as Error).message}`);
    }
  }
  config.streams.path = streams;
  config.streams.data_path = data;
}

function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
