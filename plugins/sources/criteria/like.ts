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

/** A pattern token: a literal code unit (canonicalized), `_` (one unit) or `%` (any run). */
type Token = string | typeof ONE | typeof ANY;
const ONE = 1;
const ANY = 2;

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

/**
 * SQL LIKE as a matcher that runs in O(value x pattern) time at worst: a pattern from a
 * request (`%a%a%a%b`) can never make a backtracking regex explode. Same meaning as
 * `likeToRegExp` (anchored, case-insensitive, `%` spans newlines, `\\` escapes).
 */
export function compileLike(pattern: string): (value: string) => boolean {
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) tokens.push(canonical(pattern[++i]!));
    else if (ch === '%') {
      if (tokens[tokens.length - 1] !== ANY) tokens.push(ANY);
    } else if (ch === '_') tokens.push(ONE);
    else tokens.push(canonical(ch));
  }
  const n = tokens.length;
  return (raw: string): boolean => {
    const value = canonical(raw);
    let i = 0;
    let p = 0;
    // Where the last `%` was and which value position it currently stands for.
    let star = -1;
    let starAt = 0;
    while (i < value.length) {
      const token = tokens[p];
      if (p < n && (token === ONE || token === value[i])) {
        i++;
        p++;
      } else if (p < n && token === ANY) {
        star = p++;
        starAt = i;
      } else if (star >= 0) {
        p = star + 1;
        i = ++starAt;
      } else {
        return false;
      }
    }
    while (p < n && tokens[p] === ANY) p++;
    return p === n;
  };
}

/** The regex form, for stores that take a regex (kept in step with `compileLike`). */
export function likeToRegExp(pattern: string): RegExp {
  return new RegExp(likeToRegexSource(pattern), 'is');
}

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}
