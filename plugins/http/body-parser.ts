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
    const text = body.toString('utf8');
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new BadRequestError(malformedJson(text, error as Error));
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

/**
 * A JSON syntax error as a person reads it: where (line and column, once; V8 words the place
 * differently from one Node major to the next, sometimes twice, sometimes not at all) and
 * what, without a quote of the body. The place comes from `syntaxErrorAt`, not the message.
 */
export function malformedJson(text: string, error: Error): string {
  const what = error.message
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/\s*in JSON at position \d+/, '')
    .replace(/\s*at position \d+/, '')
    .replace(/, "[^]*" is not valid JSON$/, '')
    .replace(/^Unexpected token '(.)'.*$/, "Unexpected '$1'")
    .replace(/\.$/, '');
  const position = syntaxErrorAt(text);
  if (position < 0) return `Malformed JSON body: ${what}.`;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < position; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return `Malformed JSON body at line ${line}, column ${position - lineStart + 1}: ${what}.`;
}

/**
 * The offset of the first character that is not valid JSON (text.length when it ends too
 * early), or -1. A plain recursive-descent scan, linear in the text; it runs only after
 * JSON.parse failed. Depth is bounded so a hostile body cannot exhaust the stack.
 */
export function syntaxErrorAt(text: string): number {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const string = (): void => {
    i++; // the opening quote
    while (i < text.length && text[i] !== '"') {
      const code = text.charCodeAt(i);
      if (code < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) {
              i += k;
              fail();
            }
          }
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? 'x') || i >= text.length) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = (): void => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (/[1-9]/.test(text[i] ?? '')) while (/[0-9]/.test(text[i] ?? '')) i++;
    else fail();
    if (text[i] === '.') {
      i++;
      if (!/[0-9]/.test(text[i] ?? '')) fail();
      while (/[0-9]/.test(text[i] ?? '')) i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!/[0-9]/.test(text[i] ?? '')) fail();
      while (/[0-9]/.test(text[i] ?? '')) i++;
    }
  };
  const value = (depth: number): void => {
    if (depth > 512) fail();
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return void i++;
        fail();
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return void i++;
        fail();
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === '-' || /[0-9]/.test(ch ?? '')) return number();
    fail();
  };
  try {
    value(0);
    ws();
    return i < text.length ? i : -1;
  } catch (at) {
    return Math.min(at as number, text.length);
  }
}
