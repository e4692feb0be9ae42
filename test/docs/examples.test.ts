import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, startServer } from '../helpers/server-process.js';

/**
 * Issue #34 item 1: every shell example of README.md and docs/*.md that calls the API
 * (`http://127.0.0.1:8080`) runs as written against the embedded app, each command answering
 * the status its comment promises (`# 201`), else a 2xx; a block with a loop runs whole and
 * must exit 0. A block that needs another configuration says so in a comment right before it,
 * `<!-- docs-test: config=config/x.json env=NAME=value,... -->`, and that file ships under
 * config/; `<!-- docs-test: skip: why -->` leaves a block out, saying why. So a renamed stream
 * breaks the build, not the reader. (The README's tour has its own test: readme-tour.test.ts.)
 */

const hasCurl = spawnSync('curl', ['--version']).status === 0 && spawnSync('jq', ['--version']).status === 0;
if (!hasCurl) console.log('[docs-examples] skipped: curl and jq are needed (apt-get install curl jq)');

const LITERAL = 'http://127.0.0.1:8080';

interface Example {
  file: string;
  line: number;
  text: string;
  config: string;
  env: Record<string, string>;
}

function examples(): Example[] {
  const files = ['README.md', ...readdirSync(path.join(REPO, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`)];
  const out: Example[] = [];
  for (const file of files) {
    const lines = readFileSync(path.join(REPO, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*```sh\s*$/.test(lines[i]!)) continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      const text = body.join('\n');
      // The README's tour (`URL=...`, then `$URL`) has a test of its own.
      if (!text.includes(LITERAL) || text.includes('$URL')) continue;
      const directive = /<!--\s*docs-test:\s*(.*?)\s*-->/.exec(lines[start - 1] ?? '')?.[1] ?? '';
      if (directive.startsWith('skip')) continue;
      const config = /config=(\S+)/.exec(directive)?.[1] ?? 'config/default.json';
      const env = Object.fromEntries(
        (/env=(\S+)/.exec(directive)?.[1] ?? '')
          .split(',')
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      );
      out.push({ file, line: start + 1, text, config, env });
    }
  }
  return out;
}

/** The commands of a block (a `\` continues a line), each with the status its comment promises. */
function commands(text: string): Array<{ text: string; status?: number; checked: boolean }> {
  const out: Array<{ text: string; status?: number; checked: boolean }> = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    current += (current ? '\n' : '') + line;
    if (line.trimEnd().endsWith('\\')) continue;
    const comment = /\s+#\s*([^'"]*)$/.exec(current);
    const command = comment ? current.slice(0, comment.index) : current;
    const status = comment ? /^(\d{3})\b/.exec(comment[1]!)?.[1] : undefined;
    // Only a plain curl call is checked for its status (not an assignment or a pipe).
    const checked = /^curl\s/.test(command.trimStart()) && !command.includes('|');
    out.push({ text: command, status: status === undefined ? undefined : Number(status), checked });
    current = '';
  }
  return out;
}

describe.skipIf(!hasCurl)('the examples of the docs', () => {
  const all = examples();
  const groups = new Map<string, Example[]>();
  for (const example of all) {
    const key = `${example.file} ${example.config} ${JSON.stringify(example.env)}`;
    groups.set(key, [...(groups.get(key) ?? []), example]);
  }

  it('finds the examples of the API docs', () => {
    expect(all.filter((e) => e.file === 'docs/api.md').length).toBeGreaterThanOrEqual(8);
    expect(all.some((e) => e.file === 'docs/realtime.md')).toBe(true);
  });

  for (const [key, group] of groups) {
    it(`run as written: ${key}`, async () => {
      const { file, config, env } = group[0]!;
      const folder = mkdtempSync(path.join(os.tmpdir(), 'docs-examples-'));
      const previous = { ...process.env };
      Object.assign(process.env, env);
      let server;
      try {
        server = await startServer(['--config', config, '--data', path.join(folder, 'app'), '--port', '0', '--log-level', 'warn']);
      } finally {
        process.env = previous;
      }
      try {
        for (const example of group) {
          const where = `${file}:${example.line}`;
          const text = example.text.replaceAll(LITERAL, server.url);
          const shellEnv = { ...process.env, ...env };
          if (/^\s*(while|for|until|if)\b/m.test(text)) {
            const run = spawnSync('bash', ['-c', text], { encoding: 'utf8', env: shellEnv, timeout: 20_000 });
            expect(run.status, `${where}\n${text}\n${run.stdout}\n${run.stderr}`).toBe(0);
            continue;
          }
          // Only API calls run here: anything else (a server, a build) needs a directive saying how, or why not.
          const others = commands(text).filter((c) => !/^\s*(curl\s|[A-Z_][A-Z0-9_]*=)/.test(c.text));
          expect(others.map((c) => c.text), `${where}: mark the block <!-- docs-test: skip: why --> or make it API calls only`).toEqual([]);
          // One script, so a variable set by one line is there for the next; each checked curl prints its status.
          const script = commands(text)
            // The status goes to stderr (with -i, curl 7.88 drops a -w written to stdout with -o).
            .map((c) => (c.checked ? `${c.text} -s -o /dev/null -w '%{stderr}@@%{http_code}@@\\n'` : c.text))
            .join('\n');
          // The exit status is not the check (a `--max-time` follow of an event stream ends with 28): the statuses are.
          const out = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: shellEnv, timeout: 20_000 }).stderr;
          const statuses = [...out.matchAll(/@@(\d{3})@@/g)].map((m) => Number(m[1]));
          const checked = commands(text).filter((c) => c.checked);
          expect(statuses.length, `${where}: ${out}`).toBe(checked.length);
          checked.forEach((c, i) => {
            const status = statuses[i]!;
            if (c.status !== undefined) expect(status, `${where}: ${c.text}`).toBe(c.status);
            else expect(status >= 200 && status < 300, `${where}: ${c.text} answered ${status}`).toBe(true);
          });
        }
      } finally {
        server.child.kill('SIGTERM');
        await server.exit;
        rmSync(folder, { recursive: true, force: true });
      }
    }, 60_000);
  }
});
