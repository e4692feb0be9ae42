/**
 * The unanchored body of a SQL LIKE pattern as a regular expression source: `%` any
 * run, `_` one character, `\\` escapes the next character, every other character a
 * literal (escaped), so a pattern can never carry regex syntax. Shared by the in-memory
 * engine and the MongoDB translation, which anchor it each for their own regex flavour.
 */
export function likePatternBody(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      out += escapeRegex(pattern[++i]!);
    } else if (ch === '%') {
      out += '.*';
    } else if (ch === '_') {
      out += '.';
    } else {
      out += escapeRegex(ch);
    }
  }
  return out;
}

/**
 * SQL LIKE as an anchored JavaScript regular expression source. Use with the flags `is`
 * (case-insensitive, `%` also spans newlines).
 */
export function likeToRegexSource(pattern: string): string {
  let out = `^${likePatternBody(pattern)}$`;
  // `^.*x` and `x.*$` mean the same as `x` unanchored on that side, and avoid backtracking.
  if (out.startsWith('^.*')) out = out.slice(3);
  if (out.endsWith('.*$') && !out.endsWith('\\.*$')) out = out.slice(0, -3);
  return out === '' ? '^' : out;
}

/** One `_` of a pattern: any single code unit. */
const ONE = 1;
/** A run of a pattern between two `%`: literal code units (canonicalized) and `_`s. */
type Segment = { text: string; wild: boolean; units: Array<string | typeof ONE> };

/**
 * The case canonicalization of a non-unicode `i` regex (ECMAScript Canonicalize):
 * upper case, unless that changes the length. Per code unit, so `_` stays one unit.
 */
function canonical(text: string): string {
  const upper = text.toUpperCase();
  if (upper.length === text.length) return upper;
  let out = '';
  for (const unit of text.split('')) {
    const u = unit.toUpperCase();
    out += u.length === 1 ? u : unit;
  }
  return out;
}

/** Does `segment` match `value` at `at`? */
function matchesAt(segment: Segment, value: string, at: number): boolean {
  const units = segment.units;
  for (let k = 0; k < units.length; k++) {
    const unit = units[k];
    if (unit !== ONE && unit !== value[at + k]) return false;
  }
  return true;
}

/** The leftmost position >= `from` where `segment` matches, or -1. */
function find(segment: Segment, value: string, from: number): number {
  if (!segment.wild) return value.indexOf(segment.text, from);
  return shiftAnd(segment, value, from);
}

/** Per segment with `_`: a bit mask per code unit of where it may stand (shift-and). */
const masksOf = new WeakMap<Segment, { words: number; any: Uint32Array; byUnit: Map<string, Uint32Array> }>();

/**
 * Shift-and (Baeza-Yates-Gonnet): one pass over the value, a few word operations per
 * code unit whatever the pattern, so a segment full of `_` cannot be made to compare
 * place by place (value x pattern).
 */
function shiftAnd(segment: Segment, value: string, from: number): number {
  const m = segment.units.length;
  let masks = masksOf.get(segment);
  if (masks === undefined) {
    const words = Math.ceil(m / 32);
    const any = new Uint32Array(words);
    const byUnit = new Map<string, Uint32Array>();
    segment.units.forEach((unit, j) => {
      if (unit === ONE) any[j >>> 5]! |= 1 << (j & 31);
    });
    segment.units.forEach((unit) => {
      if (unit !== ONE && !byUnit.has(unit)) byUnit.set(unit, Uint32Array.from(any));
    });
    segment.units.forEach((unit, j) => {
      if (unit !== ONE) byUnit.get(unit)![j >>> 5]! |= 1 << (j & 31);
    });
    masks = { words, any, byUnit };
    masksOf.set(segment, masks);
  }
  const { words, any, byUnit } = masks;
  const state = new Uint32Array(words);
  const lastWord = (m - 1) >>> 5;
  const lastBit = 1 << ((m - 1) & 31);
  for (let i = from; i < value.length; i++) {
    const mask = byUnit.get(value[i]!) ?? any;
    let carry = 1;
    for (let w = 0; w < words; w++) {
      const next = state[w]! >>> 31;
      state[w] = ((state[w]! << 1) | carry) & mask[w]!;
      carry = next;
    }
    if (state[lastWord]! & lastBit) return i - m + 1;
  }
  return -1;
}

/**
 * SQL LIKE as a matcher without backtracking: the pattern is cut at its `%`s into
 * segments; the first must match at the start, the last at the end, and each one between
 * at its leftmost place after the previous (leftmost is always right, since a segment has
 * a fixed length). Literal segments are found with `indexOf`; one with `_` is compared
 * place by place, which filter values bound (MAX_FILTER_VALUE). No request can make it
 * backtrack (`%a%a%a%b` against a long value once froze the server). Same meaning as
 * `likeToRegExp`: anchored, case-insensitive, `%` spans newlines, `\\` escapes.
 */
export function compileLike(pattern: string): (value: string) => boolean {
  const segments: Segment[] = [{ text: '', wild: false, units: [] }];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    const current = segments[segments.length - 1]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      const unit = canonical(pattern[++i]!);
      current.units.push(unit);
      current.text += unit;
    } else if (ch === '%') {
      segments.push({ text: '', wild: false, units: [] });
    } else if (ch === '_') {
      current.units.push(ONE);
      current.wild = true;
    } else {
      const unit = canonical(ch);
      current.units.push(unit);
      current.text += unit;
    }
  }
  const head = segments[0]!;
  if (segments.length === 1) {
    return (raw) => {
      const value = canonical(raw);
      return value.length === head.units.length && matchesAt(head, value, 0);
    };
  }
  const tail = segments[segments.length - 1]!;
  const middle = segments.slice(1, -1).filter((s) => s.units.length > 0);
  return (raw: string): boolean => {
    const value = canonical(raw);
    const tailAt = value.length - tail.units.length;
    if (tailAt < head.units.length || !matchesAt(head, value, 0) || !matchesAt(tail, value, tailAt)) return false;
    let at = head.units.length;
    for (const segment of middle) {
      const found = find(segment, value, at);
      if (found < 0 || found + segment.units.length > tailAt) return false;
      at = found + segment.units.length;
    }
    return true;
  };
}

/** The regex form, for stores that take a regex (kept in step with `compileLike`). */
export function likeToRegExp(pattern: string): RegExp {
  return new RegExp(likeToRegexSource(pattern), 'is');
}

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}
