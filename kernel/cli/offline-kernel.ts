import '../container.js';
import { loadConfigFile } from '../config.js';
import { ConfigError, PluginTimeoutError } from '../errors.js';
import { FolderLockedError } from '../tools/folder-lock.js';
import { Kernel } from '../kernel.js';
import { createLogger, type Logger, type LogLevel } from '../logger.js';
import { CliError } from './args.js';

export interface OfflineOptions {
  logLevel?: LogLevel;
  /** `streams check`: every broken definition is logged and skipped (config.report_all). */
  reportAll?: boolean;
  /** Another logger (check collects the lines); default: log lines on stderr, stdout may carry data. */
  logger?: Logger;
}

/**
 * An application booted as a server boots it (config, plugins, definitions, entries,
 * the data folder's lock) but listening nowhere: what check, export, import and migrate
 * work on. Boot problems become one line (exit 1), as `streams serve` prints them.
 */
export async function openOffline(configFile: string, options: OfflineOptions = {}): Promise<Kernel> {
  let kernel: Kernel;
  try {
    const config = loadConfigFile(configFile, { offline: true, reportAll: options.reportAll, logLevel: options.logLevel ?? 'warn' });
    kernel = new Kernel(config, { logger: options.logger ?? createLogger(config.log.level, { output: process.stderr }) });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
  try {
    await kernel.boot();
  } catch (error) {
    if (error instanceof FolderLockedError) throw new CliError(`${error.message}: stop the server first (one process owns a data folder)`);
    if (error instanceof ConfigError || error instanceof PluginTimeoutError) throw new CliError(error.message);
    throw error;
  }
  return kernel;
}

/** Run `work` on an offline application, always shutting it down (sources flushed, lock released). */
export async function withOffline<T>(configFile: string, options: OfflineOptions, work: (kernel: Kernel) => Promise<T>): Promise<T> {
  const kernel = await openOffline(configFile, options);
  try {
    return await work(kernel);
  } finally {
    await kernel.shutdown();
  }
}
