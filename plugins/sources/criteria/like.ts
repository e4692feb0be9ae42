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

export function likeToRegExp(pattern: string): RegExp {
  return new RegExp(likeToRegexSource(pattern), 'is');
}

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}
