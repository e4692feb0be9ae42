import type { FieldType } from '../contracts.js';
import { INCREMENT } from '../defaults.js';
import { configString, expectConfig, integerFromText, numberFromText, plainDefault, uncastable } from './helpers.js';

export const stringType: FieldType = {
  name: 'string',
  rule: 'string',
  message: 'The :attribute field must be a string.',
  schema: () => ({ type: 'string' }),
  // A number is an accepted lexical form of text (form posts, spreadsheets); other kinds are rejected.
  normalize: (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : value),
  castFilter: (value) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : value),
};

export const integerType: FieldType = {
  name: 'integer',
  rule: 'integer',
  message: 'The :attribute field must be an integer.',
  kind: () => 'numeric',
  // Beyond 2^53 a JSON number has already lost digits (12345678901234567890 arrives as
  // ...67000): refuse it rather than store a different number.
  schema: () => ({ type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
  normalize: (value) => integerFromText(value),
  defaultValue: (field) => (field.config.default === 'increment' ? INCREMENT : plainDefault(field.config.default)),
  castFilter(value, field) {
    const n = integerFromText(value);
    if (typeof n !== 'number' || !Number.isInteger(n)) throw uncastable(field, value, 'an integer');
    return n;
  },
};

export const numberType: FieldType = {
  name: 'number',
  rule: 'numeric',
  message: 'The :attribute field must be a number.',
  kind: () => 'numeric',
  schema: () => ({ type: 'number' }),
  normalize: (value) => numberFromText(value),
  defaultValue: (field) => (field.config.default === 'increment' ? INCREMENT : plainDefault(field.config.default)),
  castFilter(value, field) {
    const n = numberFromText(value);
    if (typeof n !== 'number' || !Number.isFinite(n)) throw uncastable(field, value, 'a number');
    return n;
  },
};

function precisionOf(config: Record<string, unknown>): number | undefined {
  const p = config.precision;
  return typeof p === 'number' && Number.isInteger(p) && p >= 0 ? p : undefined;
}

/** Round half away from zero at `precision` places, through the decimal text (no 1.005 -> 1.00). */
export function roundTo(value: number, precision: number): number {
  const sign = value < 0 ? -1 : 1;
  return sign * Number(`${Math.round(Number(`${Math.abs(value)}e${precision}`))}e-${precision}`);
}

export const decimalType: FieldType = {
  name: 'decimal',
  rule: 'numeric',
  message: 'The :attribute field must be a number.',
  configKeys: ['precision'],
  kind: () => 'numeric',
  schema: () => ({ type: 'number' }),
  normalize: (value) => numberFromText(value),
  cast(value, field) {
    const precision = precisionOf(field.config);
    return precision === undefined || typeof value !== 'number' ? value : roundTo(value, precision);
  },
  castFilter(value, field) {
    const n = numberFromText(value);
    if (typeof n !== 'number' || !Number.isFinite(n)) throw uncastable(field, value, 'a number');
    return n;
  },
  check: (field) =>
    expectConfig(field, 'precision', (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0, 'an integer >= 0'),
};

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/** true/false/1/0 and "true"/"false"/"1"/"0"/"yes"/"no"/"on"/"off" (decisions.md); anything else unchanged. */
export function booleanFrom(value: unknown): unknown {
  if (value === 1) return true;
  if (value === 0) return false;
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (text === '') return null;
    if (TRUE.has(text)) return true;
    if (FALSE.has(text)) return false;
  }
  return value;
}

export const booleanType: FieldType = {
  name: 'boolean',
  rule: 'boolean',
  message: 'The :attribute field must be true or false.',
  schema: () => ({ type: 'boolean' }),
  normalize: (value) => booleanFrom(value),
  castFilter(value, field) {
    const b = booleanFrom(value);
    if (typeof b !== 'boolean') throw uncastable(field, value, 'true or false');
    return b;
  },
};

export { configString };
