/** The kernel's public surface, re-exported by the addon API. */
export { Kernel, type KernelOptions } from './kernel.js';
export { definePlugin, DEFAULT_PLUGIN_TIMEOUTS, type Plugin, type PluginContext, type PluginFactory, type PluginTimeouts } from './plugin.js';
export { serviceRef, serviceId, type ServiceRef, type ServiceOf } from './service-ref.js';
export { Hooks, type HookListener } from './hooks.js';
export type * from './hook-map.js';
export { buildConfig, loadConfigFile, type ConfigOverrides } from './config.js';
export type { ConfigSections, KernelConfig, PluginEntryConfig } from './config-schema.js';
export { applyConfigSections, defineSettings, type ConfigSection } from './config-section.js';
export { readTextFile, readTextFileSync, stripBom } from './text-files.js';
export { injectStorageFault, storageFailure, STORAGE_RETRY_AFTER } from './storage-health.js';
export { AppError, BadRequestError, ConfigError, NotFoundError, PluginTimeoutError, ValidationError, isAppError, pluginOfError, type ErrorElement } from './errors.js';
export { APP_ROOT, CONFIG, HOOKS, KERNEL, LOGGER } from './tokens.js';
export type { Logger } from './logger.js';
export { ensureDirDurable, fsyncDir, writeFileAtomic, writeFileDurable, removeFileDurable, isTempFile, type ReplaceGuard, type ReplaceOptions } from './durable-fs.js';
export { KeyedLock } from './keyed-lock.js';
export { createAjv, describeAjvError, primaryAjvError } from './ajv.js';
export { FolderWatcher, type FolderListener, type FolderWatcherOptions } from './folder-watcher.js';
export { backoffDelay } from './backoff.js';
