import type { Entry, SourceCapabilities, SourceContext } from '../contracts.js';
import { decodeJsonEntries } from '../file/json-codec.js';
import { MemorySource } from '../memory-source.js';

/**
 * `collection`: entries in memory only, never persisted (tests, caches, computed
 * streams). Starts from the definition's `data` when it has some.
 */
export class CollectionSource extends MemorySource {
  readonly type = 'collection';
  readonly capabilities: SourceCapabilities = { inMemory: true, persistent: false };

  static create(context: SourceContext): CollectionSource {
    return new CollectionSource(context.definition, context.logger);
  }

  protected async loadAll(): Promise<Entry[]> {
    const skip = (why: string): void => this.logger.warn({}, `skipping an entry: ${why}`);
    return decodeJsonEntries(this.definition.data, this.definition, skip).entries;
  }

  protected async persistPut(): Promise<void> {}
  protected async persistDelete(): Promise<void> {}
  protected async persistTruncate(): Promise<void> {}
}
