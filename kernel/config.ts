import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configValidator, describeAjvError, primaryAjvError } from './ajv.js';
import { configSchema, type KernelConfig } from './config-schema.js';
import { ConfigError } from './errors.js';
import { stripBom } from './tools/text-files.js';

/** The launcher's flags (kernel/main.ts); applied to the file's sections before they are validated. */
export interface ConfigOverrides {
  port?: number;
  host?: string;
  logLevel?: KernelConfig['log']['level'];
  transport?: 'auto' | 'uws' | 'node';
  portFallback?: boolean;
  /** Serve a working copy of the application's streams folder from this folder (the streams plugin's settings). */
  data?: string;
  /** The `streams` tools (check, export, import, migrate): boot every plugin, never listen. */
  offline?: boolean;
  /** `streams check`: report every definition that cannot be built instead of stopping at the first. */
  reportAll?: boolean;
}

const validate = configValidator(configSchema as unknown as Record<string, unknown>);

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
 * Validate the kernel's part of a config object (from a file or built in a test) and apply
 * the launcher's flags. `baseDir` plays the role of the config file's folder. The plugins'
 * sections are validated when the kernel boots (`applyConfigSections`), once the plugins
 * that own them are loaded.
 */
export function buildConfig(raw: unknown, baseDir: string, overrides: ConfigOverrides = {}, file?: string): KernelConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError('must be a JSON object', file, '/');
  }
  const copy = structuredClone(raw) as Record<string, unknown>;
  // The flags overwrite what the file says, so they are applied before validation.
  const http = { port: overrides.port, host: overrides.host, transport: overrides.transport, port_fallback: overrides.portFallback };
  const flagged = Object.fromEntries(Object.entries(http).filter(([, value]) => value !== undefined));
  if (Object.keys(flagged).length > 0) copy.http = isObject(copy.http) ? { ...copy.http, ...flagged } : copy.http === undefined ? flagged : copy.http;
  if (!validate(copy)) {
    const error = primaryAjvError(validate.errors ?? []);
    const { path: where, message } = describeAjvError(error);
    throw new ConfigError(message, file ?? 'config', where);
  }
  const config = copy as unknown as KernelConfig;
  config.root = path.resolve(baseDir, config.root ?? '.');
  config.file = file;
  if (overrides.logLevel !== undefined) config.log.level = overrides.logLevel;
  if (overrides.data !== undefined) config.data_folder = path.resolve(overrides.data);
  // Only the launcher sets these: a config file cannot switch a server into a tool.
  delete config.offline;
  delete config.report_all;
  if (overrides.offline === true) config.offline = true;
  if (overrides.reportAll === true) config.report_all = true;
  return config;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
