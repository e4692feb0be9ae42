import { randomUUID } from 'node:crypto';
import { BadRequestError, ValidationError } from '../../kernel/index.js';
import type { EntryKey } from '../sources/index.js';
import { fieldOf, NUMERIC_FIELD_TYPES, type StreamDefinition } from '../streams/index.js';

const INTEGER_TEXT = /^-?(0|[1-9]\d{0,15})$/;
/** A declared integer key reads `04` as 4 (an undeclared key keeps `04` as a string key of its own). */
const DECLARED_INTEGER_TEXT = /^-?\d{1,16}$/;
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMBER_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function keyNameOf(definition: StreamDefinition): string {
  return definition.config.key_name || 'id';
}

/** The key field's type, or undefined when the key field is not declared. */
export function keyTypeOf(definition: StreamDefinition): string | undefined {
  return fieldOf(definition, keyNameOf(definition))?.type;
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
    if (type === 'integer') key = DECLARED_INTEGER_TEXT.test(raw) ? Number(raw) : raw;
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
    if (type === 'integer' || (type !== undefined && NUMERIC_FIELD_TYPES.has(type))) {
      throw keyTypeError(definition);
    }
  }
  return key;
}

/** Longer keys are refused (400): no store or file system should get them. */
export const MAX_KEY_LENGTH = 255;

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
 * How a POST without a key gets one (decisions.md "Keys and storage"): the key field's
 * `config.default` (`increment`, or `true` on a uuid field), else increment for an
 * integer or undeclared key and a UUID for any other type.
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

export function newUuid(): string {
  return randomUUID();
}
