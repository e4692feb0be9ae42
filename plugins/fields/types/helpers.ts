import { BadRequestError } from '../../../kernel/index.js';
import type { FieldDefinition } from '../../streams/index.js';
import { INTEGER, NUMERIC } from '../rules/rule-helpers.js';

export { plainDefault } from '../defaults.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A filter value that cannot mean anything for this field: 400 naming the field. */
export function uncastable(field: FieldDefinition, value: unknown, expected: string): BadRequestError {
  return new BadRequestError(`The filter value [${String(value)}] for field [${field.handle}] must be ${expected}.`, { field: field.handle });
}

/** Numeric strings (`"4"`, `" 2.5 "`) as numbers; `""` as null (an empty form input); anything else unchanged. */
export function numberFromText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return null;
  return NUMERIC.test(text) ? Number(text) : value;
}

export function integerFromText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return null;
  if (!INTEGER.test(text)) return value;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : value;
}

export function configString(field: FieldDefinition, key: string): string | undefined {
  const value = field.config[key];
  return typeof value === 'string' ? value : undefined;
}

/** Problems of a config key that must be one of `types` (for `check`). */
export function expectConfig(field: FieldDefinition, key: string, test: (v: unknown) => boolean, what: string): string[] {
  const value = field.config[key];
  if (value === undefined || test(value)) return [];
  return [`Field [${field.handle}]: config.${key} must be ${what}.`];
}
