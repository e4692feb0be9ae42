/** The kernel's public surface, re-exported by the addon API. */
export { Kernel, type KernelOptions } from './kernel.js';
export { definePlugin, type Plugin, type PluginContext } from './plugin.js';
export { Hooks, type HookListener } from './hooks.js';
export type * from './hook-map.js';
export { buildConfig, loadConfigFile, type ConfigOverrides } from './config.js';
export type { KernelConfig, InterfaceConfig, PluginEntryConfig, MongoConnectionConfig } from './config-schema.js';
export { readTextFile, readTextFileSync, stripBom } from './text-files.js';
export { injectStorageFault, storageFailure, STORAGE_RETRY_AFTER } from './storage-health.js';
export { AppError, BadRequestError, ConfigError, NotFoundError, ValidationError, isAppError, type ErrorElement } from './errors.js';
export { APP_ROOT, CONFIG, HOOKS, KERNEL, LOGGER } from './tokens.js';
export type { Logger } from './logger.js';
export { ensureDirDurable, fsyncDir, writeFileAtomic, writeFileDurable, removeFileDurable, isTempFile, type ReplaceGuard, type ReplaceOptions } from './durable-fs.js';
export { KeyedLock } from './keyed-lock.js';
export { createAjv, describeAjvError, primaryAjvError } from './ajv.js';
export { FolderWatcher, type FolderListener, type FolderWatcherOptions } from './folder-watcher.js';
