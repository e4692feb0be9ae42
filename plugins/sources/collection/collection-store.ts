import type { SourceContext } from '../contracts.js';
import { decodeJsonEntries } from '../file/json-codec.js';
import type { EntryStore, StoreHost } from '../memory/entry-store.js';
import { MemorySource } from '../memory-source.js';

/**
 * `collection`: entries in memory only, never persisted (tests, caches, computed
 * streams). Starts from the definition's `data` when it has some.
 */
export function createCollectionSource(context: Pick<SourceContext, 'definition' | 'logger'>): MemorySource {
  return new MemorySource(context.definition, context.logger, collectionStore);
}

/** Keeps nothing: the definition's `data` at load, every write in memory only. */
export function collectionStore(host: StoreHost): EntryStore {
  return {
    type: 'collection',
    persistent: false,
    async load() {
      const skip = (why: string): void => host.logger.warn({}, `skipping an entry: ${why}`);
      return decodeJsonEntries(host.definition.data, host.definition, skip).entries;
    },
    async put() {},
    async delete() {},
    async truncate() {},
  };
}
