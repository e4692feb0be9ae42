import { definePlugin, EXTENSIONS, FILE_ROOTS, FolderLock, FolderWatcher, isInsideFolder, type KernelConfig } from '../../kernel/index.js';
import { watchDefinitionFiles } from './definition-watch.js';
import { FileDefinitionStore } from './file-store.js';
import { DefinitionRegistry } from './registry.js';
import { FOLDER_WATCHER, STREAM_REGISTRY } from './tokens.js';
import { streamsSettings } from './settings.js';
import { DEFINITION_HOOKS } from './hooks.js';

/**
 * The streams plugin: loads `streams/*.json` as entries of the meta-stream and owns the
 * registry every other plugin reads definitions from.
 */
export const streamsPlugin = definePlugin(() => {
  let registry: DefinitionRegistry;
  let watcher: FolderWatcher | null = null;
  let locks: FolderLock[] = [];
  return {
    name: 'streams',
    settings: streamsSettings,
    emits: DEFINITION_HOOKS,
    provides: [STREAM_REGISTRY, FOLDER_WATCHER],
    // Only the kernel's own services (file roots, extensions), which need no declaration.
    uses: [],
    register({ provide, use, config, hooks, logger }) {
      const settings = config.streams;
      const roots = use(FILE_ROOTS);
      registry = new DefinitionRegistry(
        {
          metaId: settings.streams_id,
          root: config.root,
          path: settings.path,
          storeType: settings.source.type,
          defaultSource: settings.default_source,
          defaultFormat: settings.default_format,
          roots,
          maxBytes: settings.files.max_bytes,
          reportAll: config.report_all,
        },
        hooks,
        logger,
        use(EXTENSIONS),
      );
      registry.registerStore('filebase', ({ path }) => new FileDefinitionStore(path, { maxBytes: settings.files.max_bytes, roots }));
      provide(STREAM_REGISTRY, registry);
      // One watcher for every folder live sync follows (definitions here, entry files in the sources).
      if (settings.watch) watcher = new FolderWatcher(logger);
      provide(FOLDER_WATCHER, watcher);
    },
    async boot({ config, logger }) {
      // Before anything is read or listens: a second server on these files stops here (issue #27).
      for (const folder of lockedFolders(config)) locks.push(await FolderLock.acquire(folder));
      await registry.load();
      const folder = registry.storeFolder;
      if (folder !== undefined && watcher !== null) watchDefinitionFiles(registry, watcher, folder, logger);
    },
    async shutdown() {
      // Stops every watch first: nothing is re-read while the plugins shut down.
      watcher?.close();
      await registry.close();
      for (const lock of locks) lock.release();
      locks = [];
    },
  };
});

/**
 * The folders one server owns: the `--data` folder, else the definitions folder and the
 * data folder when it lies elsewhere. Only where definitions are files: with definitions in
 * a database the nodes share that database by design (docs/mongodb.md).
 */
function lockedFolders(config: KernelConfig): string[] {
  const settings = config.streams;
  if (settings.source.type !== 'filebase') return [];
  if (config.data_folder !== undefined) return [config.data_folder];
  return isInsideFolder(settings.path, settings.data_path) ? [settings.path] : [settings.path, settings.data_path];
}
