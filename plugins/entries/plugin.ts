import { definePlugin } from '../../kernel/index.js';
import { FIELDS, type FieldsService } from '../fields/index.js';
import { SOURCES, type SourceRegistry } from '../sources/index.js';
import { STREAM_REGISTRY, type StreamRegistry } from '../streams/index.js';
import { EntriesServiceImpl } from './service.js';
import { ENTRIES } from './tokens.js';

export const entriesPlugin = definePlugin({
  name: 'entries',
  requires: ['streams', 'fields', 'sources'],
  register({ container, hooks, logger }) {
    let fields: FieldsService | undefined;
    const service = new EntriesServiceImpl({
      streams: container.resolve<StreamRegistry>(STREAM_REGISTRY),
      // Resolved at first use: plugins may bind in any order within `register`.
      fields: () => (fields ??= container.resolve<FieldsService>(FIELDS)),
      sources: container.resolve<SourceRegistry>(SOURCES),
      hooks,
      logger,
    });
    container.registerInstance(ENTRIES, service);
  },
  boot({ container }) {
    // Sources sit below fields: the entries layer, which knows both, lets the sources cast
    // what they read from hand-written files by the field types.
    const fields = container.resolve<FieldsService>(FIELDS);
    const sources = container.resolve<SourceRegistry>(SOURCES);
    sources.setReviver((definition, entry) => fields.revive(definition, entry));
    // Entries edited on disk reach the entry hooks like API writes do (origin 'disk').
    const service = container.resolve<EntriesServiceImpl>(ENTRIES);
    sources.onExternalChange((stream, changes) => void service.diskChanged(stream, changes));
  },
  async shutdown({ container }) {
    // Writes in flight finish before the sources plugin (shut down after us) closes the sources.
    await container.resolve<EntriesServiceImpl>(ENTRIES).drain();
  },
});
