import type { Entry } from '../contracts.js';
import { isEntryKey, keyFromName, keyNameOf, type StreamDefinition } from '../../streams/index.js';

export type JsonShape = 'list' | 'object';

/**
 * Entries of a JSON document holding a stream: a list of entry objects, or an object
 * keyed by entry key (a key field inside an entry wins over its object key).
 */
/** An item of the file that is not served (not an entry): written back as it was, never dropped. */
export interface KeptItem {
  /** Its name in an object-shaped file. */
  name?: string;
  raw: unknown;
}

export function decodeJsonEntries(
  data: unknown,
  definition: StreamDefinition,
  onSkip: (why: string) => void,
  kept: KeptItem[] = [],
): { entries: Entry[]; shape: JsonShape } {
  const keyName = keyNameOf(definition);
  if (data === undefined || data === null) return { entries: [], shape: 'list' };
  const entries: Entry[] = [];
  const seen = new Set<string>();
  if (Array.isArray(data)) {
    data.forEach((item, index) => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        kept.push({ raw: item });
        return onSkip(`item ${index} is not an object (kept in the file, not served)`);
      }
      const entry = { ...(item as Entry) };
      if (!isEntryKey(entry[keyName])) {
        kept.push({ raw: item });
        return onSkip(`item ${index} has no ${keyName} (kept in the file, not served)`);
      }
      if (seen.has(String(entry[keyName]))) {
        kept.push({ raw: item });
        return onSkip(`item ${index} repeats ${keyName} ${String(entry[keyName])} (kept in the file, not served)`);
      }
      seen.add(String(entry[keyName]));
      entries.push(entry);
    });
    return { entries, shape: 'list' };
  }
  if (typeof data !== 'object') throw new Error('the data is neither a list nor an object');
  for (const [name, item] of Object.entries(data as Record<string, unknown>)) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      kept.push({ name, raw: item });
      onSkip(`entry "${name}" is not an object (kept in the file, not served)`);
      continue;
    }
    const entry = { ...(item as Entry) };
    if (!isEntryKey(entry[keyName])) entry[keyName] = keyFromName(name, definition);
    if (seen.has(String(entry[keyName]))) {
      kept.push({ name, raw: item });
      onSkip(`entry "${name}" repeats ${keyName} ${String(entry[keyName])} (kept in the file, not served)`);
      continue;
    }
    seen.add(String(entry[keyName]));
    entries.push(entry);
  }
  return { entries, shape: 'object' };
}

/**
 * The JSON value for the entries in `shape` (null-prototype object so no key can reach a
 * prototype), with the items that are not entries written back after them, as they were.
 */
export function encodeJsonEntries(entries: Entry[], shape: JsonShape, keyName: string, kept: KeptItem[] = []): unknown {
  if (shape === 'list') return kept.length === 0 ? entries : [...entries, ...kept.map((k) => k.raw)];
  const out = Object.create(null) as Record<string, unknown>;
  for (const entry of entries) out[String(entry[keyName])] = entry;
  for (const k of kept) if (k.name !== undefined && !(k.name in out)) out[k.name] = k.raw;
  return out;
}
