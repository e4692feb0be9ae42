import type { ValueKind } from '../contracts.js';

export const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
export const INTEGER = /^[+-]?\d+$/;

export function isNumeric(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return typeof value === 'string' && NUMERIC.test(value.trim());
}

/**
 * Laravel's "size" of a value: the number itself for numeric fields, the character
 * count of a string, the item count of a list (keys of an object).
 */
export function sizeOf(value: unknown, kind: ValueKind): number | undefined {
  if (Array.isArray(value)) return value.length;
  if (kind === 'numeric' && isNumeric(value)) return Number(value);
  if (typeof value === 'string') return [...value].length;
  if (typeof value === 'number') return value;
  if (value !== null && typeof value === 'object') return Object.keys(value).length;
  return undefined;
}

export function numberArgs(count: number, integer = false) {
  return (args: string[]): string | undefined => {
    if (args.length !== count || args.some((a) => !(integer ? INTEGER : NUMERIC).test(a))) {
      return `needs ${count === 1 ? 'one' : count} ${integer ? 'integer' : 'numeric'} argument${count === 1 ? '' : 's'}`;
    }
    return undefined;
  };
}

export function someArgs(args: string[]): string | undefined {
  return args.length === 0 || args.every((a) => a === '') ? 'needs at least one argument' : undefined;
}

export function noArgs(args: string[]): string | undefined {
  return args.length > 0 ? 'takes no arguments' : undefined;
}

/** Loose comparison like PHP's `in_array` on strings: `1` is in `['1', '2']`. */
export function looseText(value: unknown): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

const regexCache = new Map<string, RegExp | null>();

/**
 * A Laravel `regex:` argument is a PHP PCRE with delimiters (`/^a+$/i`); a bare
 * pattern is accepted too. Null when JavaScript cannot compile it.
 */
export function phpRegex(source: string): RegExp | null {
  let cached = regexCache.get(source);
  if (cached !== undefined) return cached;
  cached = null;
  try {
    const m = /^([^A-Za-z0-9\s\\])(.*)\1([imsxuU]*)$/s.exec(source);
    if (m) {
      const flags = [...new Set(m[3]!.replace(/[xU]/g, '').split(''))].join('');
      cached = new RegExp(m[2]!, flags.includes('u') ? flags : `${flags}u`);
    } else {
      cached = new RegExp(source, 'u');
    }
  } catch {
    try {
      const m = /^([^A-Za-z0-9\s\\])(.*)\1([ims]*)$/s.exec(source);
      cached = m ? new RegExp(m[2]!, m[3]) : new RegExp(source);
    } catch {
      cached = null;
    }
  }
  regexCache.set(source, cached);
  return cached;
}
