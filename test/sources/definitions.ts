import type { FieldDefinition, StreamDefinition } from '../../plugins/streams/index.js';

/** A field as the streams plugin normalizes it (built by hand until a test needs the real registry). */
export function field(handle: string, type = 'string', config: Record<string, unknown> = {}): FieldDefinition {
  return { handle, type, required: false, unique: false, protected: false, rules: [], config };
}

/** A normalized StreamDefinition built by hand. */
export function makeDefinition(
  id: string,
  options: {
    fields?: FieldDefinition[];
    source?: Record<string, unknown>;
    keyName?: string;
    data?: unknown;
    file?: string;
    cache?: { enabled?: boolean; ttl?: number; store?: string };
  } = {},
): StreamDefinition {
  const keyName = options.keyName ?? 'id';
  const config: StreamDefinition['config'] = { key_name: keyName, source: { type: 'filebase', ...(options.source ?? {}) } };
  if (options.cache) config.cache = options.cache;
  const raw: Record<string, unknown> = { id, name: id };
  if (options.data !== undefined) raw.data = options.data;
  return {
    id,
    name: id,
    config,
    fields: options.fields ?? [],
    rules: {},
    routes: [],
    data: options.data,
    extra: {},
    raw,
    file: options.file,
  };
}
