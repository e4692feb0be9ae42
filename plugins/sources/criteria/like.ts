/**
 * SQL LIKE as a regular expression source: `%` any run, `_` one character, `\`
 * escapes the next character; anchored at both ends. Use with the flags `is`
 * (case-insensitive, `%` also spans newlines); MongoDB takes the same source with
 * `$options: 'is'`.
 */
export function likeToRegexSource(pattern: string): string {
  let out = '^';
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
  out += '$';
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
