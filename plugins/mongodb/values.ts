import { BadRequestError } from '../../kernel/index.js';

/**
 * Request values are data, never query syntax. Everything that reaches a filter goes
 * through these guards: a plain object (where `$gt`, `$where`, `$regex` could hide) or
 * an array where one value is expected is a 400, before the driver ever sees it.
 */

/** Values are JSON: a Date (or any object) is never a filter value. */
export type Scalar = string | number | boolean | null;

export function isScalar(value: unknown): value is Scalar {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    default:
      return false;
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === undefined) return 'missing';
  if (typeof value === 'object' && value !== null) {
    return Object.keys(value).some((k) => k.startsWith('$')) ? 'an operator object' : 'an object';
  }
  return `a ${typeof value}`;
}

export function requireScalar(value: unknown, field: string, operator: string): Scalar {
  if (!isScalar(value)) {
    throw new BadRequestError(`The value for [${field}] with operator ${operator} must be a single string, number or boolean, not ${describe(value)}.`, {
      field,
      rule: 'filter',
    });
  }
  return value;
}

/**
 * The list operand of IN / NOT IN / BETWEEN: an array (the entries layer already split
 * comma-separated strings); every element must be a scalar.
 */
export function requireList(value: unknown, field: string, operator: string): Scalar[] {
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (!Array.isArray(list)) {
    throw new BadRequestError(`The value for [${field}] with operator ${operator} must be a list, not ${describe(value)}.`, { field, rule: 'filter' });
  }
  return list.map((item) => requireScalar(item, field, operator));
}

const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * A document coming from a request (entry attributes) must not carry `$`-prefixed or
 * dotted keys at any depth (servers before 5.0 reject them, later ones treat them
 * inconsistently in updates) nor prototype keys: a clear 400 instead of a driver error.
 */
export function assertSafeDocument(document: Record<string, unknown>, where = 'entry', depth = 0): void {
  if (depth > 100) throw new BadRequestError(`The ${where} is nested too deeply.`);
  for (const [key, value] of Object.entries(document)) {
    if (key.startsWith('$') || key.includes('.') || key.includes('\0') || FORBIDDEN_SEGMENTS.has(key)) {
      throw new BadRequestError(`The attribute name "${key}" is not allowed in a ${where}.`, { field: key, rule: 'field' });
    }
    if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
      if (Array.isArray(value)) {
        for (const item of value) {
          if (item !== null && typeof item === 'object' && !(item instanceof Date)) {
            assertSafeDocument(item as Record<string, unknown>, where, depth + 1);
          }
        }
      } else {
        assertSafeDocument(value as Record<string, unknown>, where, depth + 1);
      }
    }
  }
}
