/** Resolve the StreamRegistry with `container.resolve<StreamRegistry>(STREAM_REGISTRY)`. */
export const STREAM_REGISTRY = Symbol.for('streams-kernel:stream-registry');
/**
 * The shared FolderWatcher of live file sync (`streams.watch`), registered only when
 * watching is on: `container.isRegistered(FOLDER_WATCHER)` tells.
 */
export const FOLDER_WATCHER = Symbol.for('streams-kernel:folder-watcher');
