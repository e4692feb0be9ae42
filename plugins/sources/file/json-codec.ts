import type { StreamDefinition } from '../../streams/index.js';
import type { Entry } from '../contracts.js';
import { hasKey, keyFromName } from '../key-from-name.js';

export type JsonShape = 'list' | 'object';

/**
 * Entries of a JSON document holding a stream: a list of entry objects, or an object
 * keyed by entry key (a key field inside an entry wins over its object key).
 */
export function decodeJsonEntries(data: unknown, definition: StreamDefinition, onSkip: (why: string) => void): { entries: Entry[]; shape: JsonShape } {
  const keyName = definition.config.key_name || 'id';
  if (data === undefined || data === null) return { entries: [], shape: 'list' };
  const entries: Entry[] = [];
  if (Array.isArray(data)) {
    data.forEach((item, index) => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) return onSkip(`item ${index} is not an object`);
      const entry = { ...(item as Entry) };
      if (!hasKey(entry[keyName])) return onSkip(`item ${index} has no ${keyName}`);
      entries.push(entry);
    });
    return { entries, shape: 'list' };
  }
  if (typeof data !== 'object') throw new Error('the data is neither a list nor an object');
  for (const [name, item] of Object.entries(data as Record<string, unknown>)) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      onSkip(`entry "${name}" is not an object`);
      continue;
    }
    const entry = { ...(item as Entry) };
    if (!hasKey(entry[keyName])) entry[keyName] = keyFromName(name, definition);
    entries.push(entry);
  }
  return { entries, shape: 'object' };
}

/** The JSON value for the entries in `shape` (null-prototype object so no key can reach a prototype). */
export function encodeJsonEntries(entries: Entry[], shape: JsonShape, keyName: string): unknown {
  if (shape === 'list') return entries;
  const out = Object.create(null) as Record<string, Entry>;
  for (const entry of entries) out[String(entry[keyName])] = entry;
  return out;
}
