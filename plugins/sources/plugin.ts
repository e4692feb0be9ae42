import { definePlugin, EXTENSIONS, ExtensionLedger, FILE_ROOTS, type KernelConfig, type Logger } from '../../kernel/index.js';
import { FOLDER_WATCHER, STREAM_REGISTRY, type StreamDefinition } from '../streams/index.js';
import { createCollectionSource } from './collection/collection-store.js';
import { checkSourceConfig, storageOf } from './definition-check.js';
import { isInside } from './paths.js';
import { createFileSource } from './file/file-store.js';
import { createFilebaseSource } from './filebase/filebase-store.js';
import { SourceRegistryImpl } from './registry.js';
import { createSelfSource } from './self/self-store.js';
import { SOURCES } from './tokens.js';

/** A registry with the four built-in source types. */
export function createSourceRegistry(config: KernelConfig, root: string, logger: Logger, extensions: ExtensionLedger = new ExtensionLedger()): SourceRegistryImpl {
  const registry = new SourceRegistryImpl(config, root, logger, extensions);
  registry.registerType('filebase', createFilebaseSource);
  registry.registerType('file', createFileSource);
  registry.registerType('self', createSelfSource);
  registry.registerType('collection', createCollectionSource);
  return registry;
}

export const sourcesPlugin = definePlugin(() => {
  let registry: SourceRegistryImpl;
  return {
    name: 'sources',
    requires: ['streams'],
    provides: [SOURCES],
    uses: [STREAM_REGISTRY, FOLDER_WATCHER],
    register({ provide, use, config, root, logger, hooks, background }) {
      registry = createSourceRegistry(config, root, logger, use(EXTENSIONS));
      provide(SOURCES, registry);
      registry.watcher = use(FOLDER_WATCHER) ?? undefined;
      registry.fileRoots = use(FILE_ROOTS);
      const definitions = use(STREAM_REGISTRY);
      registry.definitions = definitions;
      definitions.addCheck((definition, streams, context) => checkSourceConfig(definition, registry, config, streams, context));
      // A redefined stream gets a new source when its source settings changed; a deleted one is closed.
      hooks.on('definition.changed', async ({ id, definition }) => {
        await registry.definitionChanged(id, definition as unknown as StreamDefinition | null);
      });
      // Files written by the operator may share storage (their choice), but never silently.
      hooks.on('kernel.booted', () => {
        const list = definitions.list();
        warnSharedStorage(list, config, root, logger);
        // Entries load now, in the background: the transport listens meanwhile (#16).
        void background('loading the entries of every stream', () => registry.preload(list));
      });
    },
    async shutdown() {
      await registry.closeAll();
    },
  };
});

/** One warning per pair of streams whose entries live in the same place (one inside the other). */
function warnSharedStorage(definitions: StreamDefinition[], config: KernelConfig, root: string, logger: Logger): void {
  const places = definitions.map((d) => ({ id: d.id, at: storageOf(d, config, root) })).filter((p): p is { id: string; at: string } => p.at !== undefined);
  for (let i = 0; i < places.length; i++) {
    for (let j = i + 1; j < places.length; j++) {
      const a = places[i]!;
      const b = places[j]!;
      if (isInside(a.at, b.at) || isInside(b.at, a.at)) logger.warn({ streams: [a.id, b.id], paths: [a.at, b.at] }, 'two streams share storage: a write to one can change or remove the entries of the other');
    }
  }
}
