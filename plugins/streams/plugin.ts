import { definePlugin, type KernelConfig } from '../../kernel/index.js';
import { FileDefinitionStore } from './file-store.js';
import { DefinitionRegistry } from './registry.js';
import { STREAM_REGISTRY } from './tokens.js';

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
  },
  async boot({ container }) {
    await container.resolve<DefinitionRegistry>(STREAM_REGISTRY).load();
  },
  async shutdown({ container }) {
    await container.resolve<DefinitionRegistry>(STREAM_REGISTRY).close();
  },
});
