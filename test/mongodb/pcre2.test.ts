/**
 * LIKE means what the server does (issue #15 item 7). MongoDB evaluates `$regex` with
 * PCRE2 (UTF mode); mingo, used elsewhere, is a JavaScript re-implementation. Here the
 * exact pattern source our translation sends (`likeToRegexSource` + options `is`) runs in
 * `pcre2test` (Debian package pcre2-utils, installed by .ci/setup-pcre2) over a pool of
 * subjects with astral characters, case folds, anchors, newlines and metacharacters, and
 * each leaf result is compared with LIKE's meaning over code points (an independent
 * oracle). Skipped, saying why, where pcre2test is missing. No MongoDB server runs here:
 * these are leaf checks of the regex engine the server embeds, not of the server.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIKE_OPTIONS, likeToRegexSource, MAX_LIKE_LENGTH, MAX_LIKE_WILDCARDS, translateClause } from '../../plugins/mongodb/criteria.js';
import { compileLike } from '../../plugins/sources/index.js';

function findPcre2test(): string | undefined {
  for (const candidate of ['/usr/bin/pcre2test', '/usr/local/bin/pcre2test']) {
    try {
      execFileSync(candidate, ['-version'], { stdio: 'pipe' });
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

const pcre2test = findPcre2test();
if (!pcre2test) console.info('[mongodb] PCRE2 leaf checks skipped: pcre2test is not installed (apt-get install pcre2-utils, or run .ci/setup-pcre2).');

/** Every code point outside printable ASCII as \x{...}: the file stays one line per item. */
function escapeForFile(text: string, keepBackslashes: boolean): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    // (spaces too: pcre2test strips them at the start of a subject line)
    if (code > 0x20 && code < 0x7f && (keepBackslashes || ch !== '\\')) out += ch;
    else out += `\\x{${code.toString(16)}}`;
  }
  return out;
}

/** Run (pattern, subjects) pairs through pcre2test; one boolean per subject. */
function runPcre2(cases: Array<{ source: string; subjects: string[] }>): boolean[][] {
  const dir = mkdtempSync(join(tmpdir(), 'pcre2-'));
  try {
    let input = '';
    for (const { source, subjects } of cases) {
      // Delimiter `/`: the translation escapes every `/` of a pattern (`\/`).
      input += `/${escapeForFile(source, true)}/${LIKE_OPTIONS},utf\n`;
      for (const subject of subjects) input += `${escapeForFile(subject, false)}\n`;
      input += '\n';
    }
    const file = join(dir, 'in.txt');
    writeFileSync(file, input);
    const output = execFileSync(pcre2test!, ['-q', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const verdicts = output.split('\n').filter((line) => line.startsWith(' 0:') || line === 'No match');
    const errors = output.split('\n').filter((line) => /Failed: error/.test(line));
    expect(errors, 'every translated pattern compiles in PCRE2').toEqual([]);
    const results: boolean[][] = [];
    let at = 0;
    for (const { subjects } of cases) results.push(subjects.map(() => verdicts[at++]!.startsWith(' 0:')));
    expect(at).toBe(verdicts.length);
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * LIKE over code points, case-insensitive by Unicode simple case folding: built
 * independently of the translation (JavaScript `iu` regex, its own escaping).
 */
function likeOracle(pattern: string): (value: string) => boolean {
  let body = '';
  const points = [...pattern];
  for (let i = 0; i < points.length; i++) {
    const ch = points[i]!;
    if (ch === '\\' && i + 1 < points.length) {
      const next = points[++i]!;
      body += /[\\^$.*+?()[\]{}|/]/.test(next) ? `\\${next}` : next;
    } else if (ch === '%') body += '[\\s\\S]*';
    else if (ch === '_') body += '[\\s\\S]';
    else body += /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
  }
  const regex = new RegExp(`^(?:${body})$`, 'iu');
  return (value) => regex.test(value);
}

const PATTERNS = [
  '', '%', '_', '__', 'a%', '%a', '%a%', 'a_c', 'A%', 'abc', '%b%', 'a%c', '%%', '_%_',
  'straße', 'STRASSE', 'ß%', 'k%', '\u212a%', 's%', 'ſ%', 'σ%', 'ς', 'Σ%', 'i%', 'İ%', 'ı%', 'ǅ', 'é_', 'É%',
  '😀', '😀%', '_😀', '%😀%', 'a_😀', '\\😀',
  'a.b', 'a*b', '(x)', '[a]', '^a$', 'a|b', 'a+', 'a?', '{1}', 'x/y', 'a-b', '$', '^', '.', '.*',
  '\\%', '\\_', '50\\%', 'a\\\\b', '\\', 'a\\', '%\\%', '\\a',
  'line', 'line%', '%\n%', 'x\ny', 'line\n', '\t%', '\r',
];

const SUBJECTS = [
  'a', 'A', 'ab', 'abc', 'ABC', 'Abc', 'ac', 'axc', 'aXc', 'b', 'bab', 'x', '%', '_', 'aa',
  'straße', 'STRASSE', 'Straße', 'STRAẞE', 'ß', 'ẞ', 'k', 'K', '\u212a', 's', 'S', 'ſ', 'σ', 'ς', 'Σ', 'i', 'I', 'İ', 'ı',
  'ǅ', 'ǆ', 'Ǆ', 'é', 'É', 'éx', 'Éx', 'e\u0301x',
  '😀', '😀😀', 'a😀', 'a😀c', 'x😀', '😀x', '𝐀', '😀a',
  'a.b', 'axb', 'a*b', 'aab', '(x)', '[a]', '^a$', 'a|b', 'a+', 'a?', '{1}', 'x/y', 'a-b', '$', '^', '.', '.*', 'a+b',
  '50%', '50x', 'a\\b', 'ab\\', '\\', 'a\\', 'x%', '\\a',
  'line', 'line\n', 'line\nx', 'x\ny', 'x\n', '\ny', '\t', '\tz', '\r', ' line',
];

describe.skipIf(!pcre2test)('LIKE translation checked in PCRE2 (pcre2test, the engine MongoDB embeds; no server)', () => {
  it(`every translated pattern compiles and matches what LIKE means over code points (${PATTERNS.length} patterns x ${SUBJECTS.length} subjects)`, () => {
    const results = runPcre2(PATTERNS.map((pattern) => ({ source: likeToRegexSource(pattern), subjects: SUBJECTS })));
    const mismatches: string[] = [];
    PATTERNS.forEach((pattern, p) => {
      const oracle = likeOracle(pattern);
      SUBJECTS.forEach((subject, s) => {
        const expected = oracle(subject);
        if (results[p]![s] !== expected) mismatches.push(`${JSON.stringify(pattern)} on ${JSON.stringify(subject)}: PCRE2 ${results[p]![s]}, LIKE ${expected}`);
      });
    });
    console.info(`[mongodb] PCRE2 leaf checks: ${PATTERNS.length * SUBJECTS.length} pattern/subject pairs compared with LIKE over code points`);
    expect(mismatches).toEqual([]);
  });

  it('the server\'s $ would match before a trailing newline: the translation ends with (?![\\s\\S]) instead', () => {
    const [[withDollar], [ours]] = runPcre2([
      { source: '^line$', subjects: ['line\n'] },
      { source: likeToRegexSource('line'), subjects: ['line\n'] },
    ]);
    expect(withDollar).toBe(true); // PCRE2's $ (what a naive translation would send)
    expect(ours).toBe(false); // LIKE 'line' does not match "line\n"
  });

  it('where the in-memory engine differs from the server (documented): `_` is one UTF-16 code unit in memory, one code point in PCRE2', () => {
    const [[onServer]] = runPcre2([{ source: likeToRegexSource('a_c'), subjects: ['a😀c'] }]);
    expect(onServer).toBe(true);
    expect(compileLike('a_c')('a😀c')).toBe(false);
    expect(compileLike('a__c')('a😀c')).toBe(true);
  });

  it('a pattern longer than the cap, or with more % runs than the cap, is a 400 before any regex is built', () => {
    const like = (value: string) => () => translateClause({ boolean: 'and', field: 'title', operator: 'LIKE', value }, 'id');
    expect(like('a'.repeat(MAX_LIKE_LENGTH + 1))).toThrow(/at most 256 characters/);
    expect(like('%a'.repeat(MAX_LIKE_WILDCARDS + 1))).toThrow(/at most 16/);
    expect(like('%a'.repeat(MAX_LIKE_WILDCARDS))).not.toThrow();
    // Escaped % are literals and do not count.
    expect(like('\\%'.repeat(MAX_LIKE_WILDCARDS + 1))).not.toThrow();
  });

  it('a LIKE filter sends exactly the checked source with options "is"', () => {
    const filter = translateClause({ boolean: 'and', field: 'title', operator: 'LIKE', value: 'a%' }, 'id');
    expect(filter).toEqual({ title: { $regex: likeToRegexSource('a%'), $options: 'is' } });
  });
});
