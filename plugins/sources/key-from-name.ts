import { fieldOf, NUMERIC_FIELD_TYPES, type StreamDefinition } from '../streams/index.js';
import type { EntryKey } from './contracts.js';

const INTEGER_TEXT = /^-?(0|[1-9]\d{0,15})$/;
const NUMBER_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/**
 * The key of an entry known only by a name (a file name, an object key): numeric
 * when the key field is numeric, or undeclared and the name is an integer (the PHP
 * system's `1.json`); else the name as a string.
 */
export function keyFromName(name: string, definition: StreamDefinition): EntryKey {
  const keyName = definition.config.key_name || 'id';
  const type = fieldOf(definition, keyName)?.type;
  if (type === undefined) return INTEGER_TEXT.test(name) ? Number(name) : name;
  if (NUMERIC_FIELD_TYPES.has(type) && NUMBER_TEXT.test(name)) return Number(name);
  return name;
}

/** The stored key of a loaded entry: a key field inside wins over the name. */
export function hasKey(value: unknown): value is EntryKey {
  return (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));
}
