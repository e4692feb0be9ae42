import { AppError, BadRequestError } from '../../kernel/index.js';
import { parseForm } from './form-parser.js';

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Reject `__proto__`-like keys at any depth (JSON.parse keeps them as own keys; a later spread would not). */
export function assertSafeKeys(value: unknown, depth = 0): void {
  if (depth > 64) throw new BadRequestError('The request body is nested too deeply.');
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) assertSafeKeys(item, depth + 1);
    return;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN.has(key)) throw new BadRequestError(`The key "${key}" is not allowed in a request body.`);
    assertSafeKeys((value as Record<string, unknown>)[key], depth + 1);
  }
}

function mediaType(contentType: string): string {
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Parse a request body into a flat field map. Empty body: undefined. JSON must be an
 * object (400 otherwise), form bodies nest with brackets; other content types: 415.
 * A body without a content type is read as JSON (curl -d without -H is common).
 */
export function parseBody(contentType: string | undefined, body: Buffer): Record<string, unknown> | undefined {
  if (body.length === 0) return undefined;
  const type = contentType ? mediaType(contentType) : 'application/json';
  if (isJsonType(type)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw new BadRequestError(`Malformed JSON body: ${(error as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new BadRequestError('The request body must be a JSON object.');
    }
    assertSafeKeys(parsed);
    return parsed as Record<string, unknown>;
  }
  if (type === 'application/x-www-form-urlencoded') {
    return parseForm(body.toString('utf8')) as Record<string, unknown>;
  }
  throw new AppError(415, `Unsupported content type "${type}": send application/json or application/x-www-form-urlencoded.`);
}
