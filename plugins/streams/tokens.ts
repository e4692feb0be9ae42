import { serviceRef, type FolderWatcher } from '../../kernel/index.js';
import type { StreamRegistry } from './contracts.js';

/** The stream registry: `context.use(STREAM_REGISTRY)`. */
export const STREAM_REGISTRY = serviceRef<StreamRegistry>('stream-registry');
/** The shared FolderWatcher of live file sync, or null when `streams.watch` is off. */
export const FOLDER_WATCHER = serviceRef<FolderWatcher | null>('folder-watcher');
