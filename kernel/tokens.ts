import type { KernelConfig } from './config-schema.js';
import type { ExtensionLedger } from './extensions.js';
import type { FileRoots } from './file-roots.js';
import type { Hooks } from './hooks.js';
import type { Kernel } from './kernel.js';
import type { Logger } from './logger.js';
import type { StorageHealth } from './tools/storage-health.js';
import { serviceRef } from './service-ref.js';

/**
 * The services the kernel itself provides to every plugin (also on each plugin's context).
 * Plugins define their own references in their own index.ts.
 */
export const CONFIG = serviceRef<KernelConfig>('config');
export const LOGGER = serviceRef<Logger>('logger');
export const HOOKS = serviceRef<Hooks>('hooks');
export const APP_ROOT = serviceRef<string>('app-root');
export const KERNEL = serviceRef<Kernel>('kernel');
/** The folders files may be read from and written to: the application root and the `--data` folder (issue #27). */
export const FILE_ROOTS = serviceRef<FileRoots>('file-roots');
/** Who registered each named extension (field types, source types, middleware...); closes when serving starts (issue #30). */
/** This kernel's storage health: a write fault under its folders, for `/readyz` and metrics (issue #30: per kernel). */
export const STORAGE_HEALTH = serviceRef<StorageHealth>('storage-health');
export const EXTENSIONS = serviceRef<ExtensionLedger>('extensions');
