import { BadRequestError } from '../../kernel/index.js';

/**
 * Parse `application/x-www-form-urlencoded` text and query strings with bracket
 * nesting: `a=1`, `a[b]=c`, `a[b][c]=d`, `a[]=x&a[]=y`. Every object it creates has a
 * null prototype, and `__proto__`, `constructor` and `prototype` keys are a 400: a
 * request can never reach an object's prototype through its parameters.
 */

export type FormValue = string | FormValue[] | FormObject;
export interface FormObject {
  [key: string]: FormValue;
}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_PAIRS = 1000;
const MAX_DEPTH = 8;

function decode(text: string): string {
  if (text.indexOf('%') === -1 && text.indexOf('+') === -1) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new BadRequestError(`Malformed percent-encoding in "${text.slice(0, 50)}".`);
  }
}

/** `a[b][]` -> ['a', 'b', ''] ('' means "append"). */
function splitKey(key: string): string[] {
  const open = key.indexOf('[');
  if (open === -1) return [key];
  if (open === 0 || !key.endsWith(']')) throw new BadRequestError(`Malformed parameter name "${key.slice(0, 80)}".`);
  const parts = [key.slice(0, open)];
  let rest = key.slice(open);
  while (rest.length > 0) {
    if (rest[0] !== '[') throw new BadRequestError(`Malformed parameter name "${key.slice(0, 80)}".`);
    const close = rest.indexOf(']');
    if (close === -1) throw new BadRequestError(`Malformed parameter name "${key.slice(0, 80)}".`);
    parts.push(rest.slice(1, close));
    rest = rest.slice(close + 1);
  }
  if (parts.length > MAX_DEPTH) throw new BadRequestError(`Parameter "${parts[0]}" is nested too deeply.`);
  return parts;
}

function conflict(name: string): never {
  throw new BadRequestError(`Parameter "${name}" is given both as a value and as a nested parameter.`);
}

export function parseForm(text: string): FormObject {
  const result = Object.create(null) as FormObject;
  if (text.length === 0) return result;
  const pairs = text.split('&');
  if (pairs.length > MAX_PAIRS) throw new BadRequestError(`Too many parameters (more than ${MAX_PAIRS}).`);
  for (const pair of pairs) {
    if (pair.length === 0) continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const path = splitKey(decode(rawKey));
    for (const segment of path) {
      if (FORBIDDEN.has(segment)) throw new BadRequestError(`Parameter name "${segment}" is not allowed.`);
    }
    if (path[0] === '') throw new BadRequestError('Parameter names must not be empty.');
    assign(result, path, value, path[0]!);
  }
  return result;
}

function assign(target: FormObject | FormValue[], path: string[], value: string, name: string): void {
  let node: FormObject | FormValue[] = target;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i]!;
    const last = i === path.length - 1;
    if (Array.isArray(node)) {
      if (segment !== '') conflict(name);
      if (last) {
        node.push(value);
        return;
      }
      const child: FormObject | FormValue[] = path[i + 1] === '' ? [] : (Object.create(null) as FormObject);
      node.push(child);
      node = child;
      continue;
    }
    if (segment === '') conflict(name);
    if (last) {
      const existing = node[segment];
      if (existing !== undefined && typeof existing !== 'string') conflict(name);
      node[segment] = value;
      return;
    }
    const wantArray = path[i + 1] === '';
    let child = node[segment];
    if (child === undefined) {
      child = wantArray ? [] : (Object.create(null) as FormObject);
      node[segment] = child;
    } else if (typeof child === 'string' || Array.isArray(child) !== wantArray) {
      conflict(name);
    }
    node = child as FormObject | FormValue[];
  }
}
