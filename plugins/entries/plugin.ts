import { definePlugin, EXTENSIONS, FILE_ROOTS } from '../../kernel/index.js';
import { FIELDS, type FieldsService } from '../fields/index.js';
import { SOURCES } from '../sources/index.js';
import { STREAM_REGISTRY } from '../streams/index.js';
import { EntriesServiceImpl } from './service.js';
import { ENTRIES } from './tokens.js';
import { ENTRY_HOOKS } from './hooks.js';

export const entriesPlugin = definePlugin(() => {
  let service: EntriesServiceImpl;
  return {
    name: 'entries',
    requires: ['streams', 'fields', 'sources'],
    emits: ENTRY_HOOKS,
    provides: [ENTRIES],
    uses: [STREAM_REGISTRY, FIELDS, SOURCES],
    register({ provide, use, hooks, logger, config }) {
      let fields: FieldsService | undefined;
      service = new EntriesServiceImpl({
        streams: use(STREAM_REGISTRY),
        jsonCacheBytes: config.streams.caches.json_bytes,
        // Used at first use: the fields plugin's types are all registered by then.
        fields: () => (fields ??= use(FIELDS)),
        sources: use(SOURCES),
        hooks,
        logger,
        fileRoots: use(FILE_ROOTS),
        extensions: use(EXTENSIONS),
      });
      provide(ENTRIES, service);
    },
    boot({ use, background }) {
      // Sources sit below fields: the entries layer, which knows both, lets the sources cast
      // what they read from hand-written files by the field types.
      const fields = use(FIELDS);
      const sources = use(SOURCES);
      sources.setReviver((definition, entry) => fields.revive(definition, entry));
      // Entries edited on disk reach the entry hooks like API writes do (origin 'disk').
      sources.onExternalChange((stream, changes) => void background(`taking in the changes on disk of stream "${stream}"`, () => service.diskChanged(stream, changes)));
    },
    async shutdown() {
      // Writes in flight finish before the sources plugin (shut down after us) closes the sources.
      await service.drain();
    },
  };
});
