/**
 * Returned by a type's `defaultValue` for `config.default: "increment"`: the service
 * gives a non-key field the stream's largest value + 1 (EntryLookup.max) and leaves a
 * key field to the entries layer (`keyStrategy` of plugins/streams/keys.ts).
 */
export const INCREMENT: unique symbol = Symbol.for('streams-kernel:fields:increment');

/** `config.default` as given; objects and lists copied so entries never share them. */
export function plainDefault(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? structuredClone(value) : value;
}
