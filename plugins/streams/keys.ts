import { randomUUID } from 'node:crypto';
import { BadRequestError, ValidationError } from '../../kernel/index.js';
import { fieldOf, NUMERIC_FIELD_TYPES, type StreamDefinition } from './types.js';

/**
 * Entry keys, owned here for every layer (the API reads them from URLs, the entries layer
 * casts and generates them, the fields plugin fills a UUID key, file sources read them
 * from file names, MongoDB types its `_id` by them): what a key is, how a text becomes
 * one, and how a new one is made. docs/decisions.md, "Keys and storage".
 */

/** A stored entry's key: a string or a finite number. */
export type EntryKey = string | number;

const INTEGER_TEXT = /^-?(0|[1-9]\d{0,15})$/;
/** A declared integer key reads `04` as 4 (an undeclared key keeps `04` as a string key of its own). */
const DECLARED_INTEGER_TEXT = /^-?\d{1,16}$/;
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMBER_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;
/** Digits, leading zeros allowed (what an increment counter reads as an integer key). */
const DIGITS_TEXT = /^-?\d+$/;

/**
 * The number a key stands for in key order and numeric typing: a number as is, a text written
 * as a canonical number (`7`, `-2.5`; not `07` or `7.`) as its value, anything else undefined.
 * The one place that says which keys are numeric (the sources' key order and sort keys,
 * MongoDB's `_id` typing and its stored key order).
 */
export function numericKeyValue(key: unknown): number | undefined {
  if (typeof key === 'number') return key;
  return typeof key === 'string' && NUMBER_TEXT.test(key) ? Number(key) : undefined;
}

/** Whether a text is written as a canonical number (`7`, `-2.5`), so a numeric key field reads it as one. */
export function isNumericKeyText(text: string): boolean {
  return NUMBER_TEXT.test(text);
}
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Longer keys are refused (400): no store or file system should get them. */
export const MAX_KEY_LENGTH = 255;

/** The key field's handle (normalization gives every definition one, `id` by default). */
export function keyNameOf(definition: StreamDefinition): string {
  return definition.config.key_name;
}

/** The key field's type, or undefined when the key field is not declared. */
export function keyTypeOf(definition: StreamDefinition): string | undefined {
  return fieldOf(definition, keyNameOf(definition))?.type;
}

/** Whether keys of a stream are numbers (a numeric key field), strings, or either (undeclared). */
export type KeyKind = 'number' | 'string' | 'auto';

/** Whether keys of this stream are numbers (a numeric key field), strings, or either (undeclared). */
export function keyKindOf(definition: StreamDefinition): KeyKind {
  const type = keyTypeOf(definition);
  if (type === undefined) return 'auto';
  return NUMERIC_FIELD_TYPES.has(type) ? 'number' : 'string';
}

/** A stored key value: a non-empty string or a finite number. */
export function isEntryKey(value: unknown): value is EntryKey {
  return (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));
}

/**
 * The value of `text[0, end)` when it is a non-negative integer of at most ten digits as
 * written canonically (`7`, not `07`, `+7` or `7.0`), else -1. Used where integer keys and
 * file names are kept as numbers (the key map, filebase file lists and their order), and to
 * cast the usual URL key (`/entries/42`) without a regular expression.
 */
export function canonicalInteger(text: string, end = text.length): number {
  if (end < 1 || end > 10 || (end > 1 && text.charCodeAt(0) === 48)) return -1;
  let n = 0;
  for (let i = 0; i < end; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  return n;
}

/**
 * A key as received (URL segment, payload value) cast by the key field's type:
 * `/entries/4` finds the integer 4 when the key is an integer or undeclared.
 * Throws 400 for keys that are not strings/numbers or could reach a prototype.
 */
export function castKey(definition: StreamDefinition, raw: unknown): EntryKey {
  const type = keyTypeOf(definition);
  let key: EntryKey;
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) throw new BadRequestError('The entry key must be a finite number or a string.', { rule: 'key' });
    // Never rounded: past 2^53 two keys would be one; -0 would name the entry 0 under another spelling.
    if (Object.is(raw, -0) || (Number.isInteger(raw) && !Number.isSafeInteger(raw))) throw keyTypeError(definition, 'is not an exact integer');
    key = raw;
  } else if (typeof raw === 'string') {
    if (raw === '') throw new BadRequestError('The entry key must not be empty.', { rule: 'key' });
    const small = type === 'integer' || type === undefined ? canonicalInteger(raw) : -1;
    if (small >= 0) key = small;
    else if (type === 'integer') key = DECLARED_INTEGER_TEXT.test(raw) ? Number(raw) : raw;
    else if (type === undefined) key = INTEGER_TEXT.test(raw) ? Number(raw) : raw;
    // A UUID names one entry whatever its case (the uuid type stores lower case).
    else if (type === 'uuid') key = UUID_TEXT.test(raw) ? raw.toLowerCase() : raw;
    else if (NUMERIC_FIELD_TYPES.has(type)) key = NUMBER_TEXT.test(raw) ? Number(raw) : raw;
    else key = raw;
  } else {
    throw new BadRequestError('The entry key must be a string or a number.', { rule: 'key' });
  }
  if (typeof key === 'number' && Number.isInteger(key) && !Number.isSafeInteger(key)) throw keyTypeError(definition, 'is not an exact integer');
  if (typeof key === 'string') {
    if (key.length > MAX_KEY_LENGTH) throw new BadRequestError(`The entry key is longer than ${MAX_KEY_LENGTH} characters.`, { rule: 'key' });
    if (FORBIDDEN_KEYS.has(key)) throw new BadRequestError(`Invalid entry key "${key}".`, { rule: 'key' });
    if (type !== undefined && NUMERIC_FIELD_TYPES.has(type)) throw keyTypeError(definition);
  }
  return key;
}

/** The key cast by the key field's type, or undefined for a key no entry can have (a lookup answers not found, not a 400). */
export function existingKey(definition: StreamDefinition, raw: unknown): EntryKey | undefined {
  try {
    return castKey(definition, raw);
  } catch {
    return undefined;
  }
}

/**
 * A key as a store that keeps keys typed holds it (MongoDB's `_id`): `4` and `"4"` name the
 * same entry, so a key is normalized to the stream's key kind (undeclared keys: canonical safe
 * integers as numbers, anything else as strings). Unlike `castKey` a text the key field's type
 * refuses is kept as given (the entries layer refuses it before a write); what is no key at
 * all (not a string or a finite number, empty, over 1024 characters) is a 400.
 */
export function typedKey(key: unknown, kind: KeyKind): EntryKey {
  if (typeof key === 'number') {
    if (!Number.isFinite(key)) throw new BadRequestError('The entry key must be a finite number or a string.', { rule: 'key' });
    return kind === 'string' ? String(key) : key;
  }
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024) {
    throw new BadRequestError('The entry key must be a non-empty string or a number.', { rule: 'key' });
  }
  if (kind === 'string') return key;
  if (kind === 'number' && NUMBER_TEXT.test(key)) return Number(key);
  // INTEGER_TEXT's 16 digits hold every safe integer: the length bound decides nothing here.
  if (kind === 'auto' && INTEGER_TEXT.test(key) && Number.isSafeInteger(Number(key))) return Number(key);
  // A non-numeric key on a numeric key field is the entries layer's to refuse; stored as given.
  return key;
}

/**
 * The integer a stored key counts as when the next increment key is chosen (`maxIntegerKey`):
 * an integer number, or a text of digits (`12`, `-3`, and `007` too, though it is a string key
 * of its own); undefined for anything else.
 */
export function integerKeyValue(key: unknown): number | undefined {
  const n = typeof key === 'number' ? key : typeof key === 'string' && DIGITS_TEXT.test(key) ? Number(key) : NaN;
  return Number.isInteger(n) ? n : undefined;
}

/**
 * The key of an entry known only by a name (a file name without its extension, an object
 * key): numeric when the key field is numeric, or undeclared and the name is an integer
 * (the PHP system's `1.json`); else the name as a string.
 */
export function keyFromName(name: string, definition: StreamDefinition): EntryKey {
  const type = keyTypeOf(definition);
  if (type === undefined) return INTEGER_TEXT.test(name) ? Number(name) : name;
  if (NUMERIC_FIELD_TYPES.has(type) && NUMBER_TEXT.test(name)) return Number(name);
  return name;
}

/** A key the key field's type refuses: a validation failure like any other field's (409). */
function keyTypeError(definition: StreamDefinition, why?: string): ValidationError {
  const field = keyNameOf(definition);
  const type = keyTypeOf(definition);
  const integer = type === 'integer' || type === undefined;
  const name = field.replace(/_/g, ' ');
  const message = why ? `The ${name} field ${why}.` : `The ${name} field must be ${integer ? 'an integer' : 'a number'}.`;
  return new ValidationError([{ message, meta: { field, rule: integer ? 'integer' : 'numeric' } }]);
}

export type KeyStrategy = 'increment' | 'uuid' | 'none';

/**
 * How a create without a key gets one: the key field's `config.default` (`increment`, or
 * `true` or `"uuid"` on a uuid field), else increment for an integer or undeclared key and
 * a UUID for any other type; `none` when the default is some other value (the key is then
 * that default, or required).
 */
export function keyStrategy(definition: StreamDefinition): KeyStrategy {
  const field = fieldOf(definition, keyNameOf(definition));
  const declared = field?.config.default;
  if (declared === 'increment') return 'increment';
  if (declared === true && field?.type === 'uuid') return 'uuid';
  if (declared === 'uuid') return 'uuid';
  if (declared !== undefined && declared !== null && declared !== false) return 'none';
  if (!field || field.type === 'integer') return 'increment';
  return 'uuid';
}

/** A new UUID key (lower case, as the uuid type stores it). */
export function newUuidKey(): string {
  return randomUUID();
}
