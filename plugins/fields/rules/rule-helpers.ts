import type * as Re2js from 're2js';
import { lazyRequire } from '../../../kernel/index.js';
import type { ValueKind } from '../contracts.js';

// RE2JS (a 260 KB module, ~8 ms to load) loads with the first `regex`/`not_regex` rule.
const re2js = lazyRequire<typeof Re2js>('re2js');

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

/** A compiled `regex:` rule: a linear-time matcher. */
export interface RuleRegex {
  test(text: string): boolean;
}

/** Compiled rule patterns, bounded (definitions are few; a reload may bring new ones). */
const regexCache = new Map<string, RuleRegex | null>();
const REGEX_CACHE_SIZE = 512;

/**
 * A Laravel `regex:` argument is a PHP PCRE with delimiters (`/^a+$/i`); a bare pattern is
 * accepted too. It is compiled with RE2 (re2js, the pure-JS port): matching is linear in
 * the value, so a rule such as `/^(a+)+$/` cannot freeze the server (a backtracking engine
 * took 33 s on one request). Flags `i`, `m`, `s` are honoured, `u` is RE2's default, `U`
 * does not change a yes/no match; backreferences, lookaround and `x` are not RE2 syntax:
 * null, and the definition is refused naming the rule.
 */
export function phpRegex(source: string): RuleRegex | null {
  let cached = regexCache.get(source);
  if (cached !== undefined) return cached;
  cached = null;
  const m = /^([^A-Za-z0-9\s\\])(.*)\1([imsxuU]*)$/s.exec(source);
  const body = m ? m[2]! : source;
  const flags = m ? m[3]! : '';
  if (!flags.includes('x')) {
    const { RE2JS } = re2js();
    let options = 0;
    if (flags.includes('i')) options |= RE2JS.CASE_INSENSITIVE;
    if (flags.includes('m')) options |= RE2JS.MULTILINE;
    if (flags.includes('s')) options |= RE2JS.DOTALL;
    try {
      const re = RE2JS.compile(body, options);
      cached = { test: (text) => re.matcher(text).find() };
    } catch {
      cached = null;
    }
  }
  if (regexCache.size >= REGEX_CACHE_SIZE) regexCache.delete(regexCache.keys().next().value!);
  regexCache.set(source, cached);
  return cached;
}
