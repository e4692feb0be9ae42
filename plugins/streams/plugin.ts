import { definePlugin, FolderWatcher, type KernelConfig } from '../../kernel/index.js';
import { watchDefinitionFiles } from './definition-watch.js';
import { FileDefinitionStore } from './file-store.js';
import { DefinitionRegistry } from './registry.js';
import { FOLDER_WATCHER, STREAM_REGISTRY } from './tokens.js';

/**
 * The streams plugin: loads `streams/*.json` as entries of the meta-stream and owns the
 * registry every other plugin reads definitions from.
 */
export const streamsPlugin = definePlugin({
  name: 'streams',
  register({ container, config, hooks, logger }) {
    const settings = (config as KernelConfig).streams;
    const registry = new DefinitionRegistry(
      {
        metaId: settings.streams_id,
        root: config.root,
        path: settings.path,
        storeType: settings.source.type,
        defaultSource: settings.default_source,
        defaultFormat: settings.default_format,
      },
      hooks,
      logger,
    );
    registry.registerStore('filebase', ({ path }) => new FileDefinitionStore(path));
    container.registerInstance(STREAM_REGISTRY, registry);
    // One watcher for every folder live sync follows (definitions here, entry files in the sources).
    if (settings.watch) container.registerInstance(FOLDER_WATCHER, new FolderWatcher(logger));
  },
  async boot({ container }) {
    const registry = container.resolve<DefinitionRegistry>(STREAM_REGISTRY);
    await registry.load();
    const folder = registry.storeFolder;
    if (folder !== undefined && container.isRegistered(FOLDER_WATCHER, true)) watchDefinitionFiles(registry, container.resolve<FolderWatcher>(FOLDER_WATCHER), folder);
  },
  async shutdown({ container }) {
    // Stops every watch first: nothing is re-read while the plugins shut down.
    if (container.isRegistered(FOLDER_WATCHER, true)) container.resolve<FolderWatcher>(FOLDER_WATCHER).close();
    await container.resolve<DefinitionRegistry>(STREAM_REGISTRY).close();
  },
});
