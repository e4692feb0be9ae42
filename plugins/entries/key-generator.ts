import { KeyedLock, ValidationError } from '../../kernel/index.js';
import type { EntryKey, Source } from '../sources/index.js';
import { keyNameOf, keyStrategy, newUuidKey, type StreamDefinition } from '../streams/index.js';

/**
 * New keys of creates without one: a UUID, or the next integer of the stream. The integer
 * counter lives per open source (a redefined stream gets a fresh one), starts from the
 * largest stored integer key, moves past keys written by hand or through the API, and
 * gives a number back when the create that took it failed.
 */
export class KeyGenerator {
  private readonly counters = new WeakMap<Source, number>();
  private readonly generation = new KeyedLock();

  async generate(definition: StreamDefinition, source: Source): Promise<EntryKey> {
    const strategy = keyStrategy(definition);
    if (strategy === 'uuid') return newUuidKey();
    if (strategy === 'none') {
      const keyName = keyNameOf(definition);
      throw new ValidationError([{ message: `The ${keyName} field is required.`, meta: { field: keyName, rule: 'required' } }]);
    }
    // A source that allocates keys itself (shared by every node, as MongoDB's counters
    // collection is) is the only safe authority; a local max + 1 would collide across nodes.
    if (source.allocateIntegerKey) return source.allocateIntegerKey();
    // One generator per stream at a time, so two creates never get the same number.
    return this.generation.run(definition.id, async () => {
      let last = this.counters.get(source);
      if (last === undefined) last = (await maxIntegerKey(definition, source)) ?? 0;
      const next = last + 1;
      this.counters.set(source, next);
      return next;
    });
  }

  /** A key was stored (a write, an edit on disk): the counter moves past an integer one. */
  stored(source: Source, key: unknown): void {
    if (typeof key !== 'number' || !Number.isInteger(key)) return;
    const counter = this.counters.get(source);
    if (counter !== undefined && key > counter) this.counters.set(source, key);
  }

  /** A create that took `key` failed: give the number back when no later one was handed out. */
  giveBack(source: Source, key: EntryKey): void {
    if (typeof key === 'number' && this.counters.get(source) === key) this.counters.set(source, key - 1);
  }
}

async function maxIntegerKey(definition: StreamDefinition, source: Source): Promise<number | undefined> {
  if (source.maxIntegerKey) return source.maxIntegerKey();
  const keyName = keyNameOf(definition);
  const top = await source.query({ where: [], orderBy: [{ field: keyName, direction: 'desc' }] });
  for (const entry of top) {
    const key = entry[keyName];
    if (typeof key === 'number' && Number.isInteger(key)) return key;
  }
  return undefined;
}
