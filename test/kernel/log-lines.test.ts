/**
 * Logs for people (issue #32): JSON lines on a pipe with no repeated key, readable lines on
 * a terminal or with --pretty, one banner with the url.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { formatLogLine } from '../../kernel/log-format.js';
import { STREAMS_BIN } from '../helpers/cli.js';
import { REPO, startServer } from '../helpers/server-process.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { topLevelKeys } from '../helpers/json-keys.js';

// Working copies of the embedded app (--data): the checkout itself is never written.
const work = mkdtempSync(path.join(tmpdir(), 'streams-logs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('log lines', () => {
  it('on a pipe: JSON lines, none repeating a key, one listening line that is the banner', async () => {
    const config = path.join(REPO, 'config', 'default.json');
    const server = await startServer(['serve', '--config', config, '--port', '0', '--data', path.join(work, 'logs'), '--log-level', 'debug'], REPO, STREAMS_BIN);
    try {
      await request(`${server.url}/api/streams/books/entries/1`).then((r) => r.body.dump());
      await request(`${server.url}/api/streams/nope/entries`).then((r) => r.body.dump());
      const lines = server.stdout().trim().split('\n');
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) {
        const keys = topLevelKeys(line);
        expect(new Set(keys).size, line).toBe(keys.length);
      }
      const listening = lines.filter((line) => line.includes('"msg":"listening"'));
      expect(listening).toHaveLength(1);
      const banner = JSON.parse(listening[0]!) as Record<string, unknown>;
      expect(banner).toMatchObject({ url: server.url, links: { docs: `${server.url}/api/docs` } });
      // The fallback's reason is said once, by its own warning line, never again here.
      expect(banner.reason).toBeUndefined();
      expect(banner.hint).toBeUndefined();
    } finally {
      server.child.kill('SIGTERM');
      await server.exit;
    }
  });

  it('--pretty prints readable lines and the banner instead of JSON', async () => {
    const child = spawn(process.execPath, [STREAMS_BIN, 'serve', '--config', path.join(REPO, 'config', 'default.json'), '--port', '0', '--pretty', '--data', path.join(work, 'pretty')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner: ${out}`)), 15_000);
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/listening on http:\/\/127\.0\.0\.1:\d+/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(out).toMatch(/^Streams Kernel listening on http:\/\/127\.0\.0\.1:\d+ \(.+\)\n {2}docs {5}http:\/\/127\.0\.0\.1:\d+\/api\/docs$/m);
    expect(out).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  \[sources\] ready: entries of every stream loaded streams=3/m);
    expect(out).not.toMatch(/^\{"level"/m);
  });

  it('formats a line: time, level, plugin, message, the other keys, the stack of an error', () => {
    const line = JSON.stringify({ level: 50, time: Date.UTC(2026, 10, 25, 9, 5, 7, 12), pid: 1, plugin: 'http', requestId: 'a-1', path: '/x y', err: { message: 'boom', stack: 'Error: boom\n    at here' }, msg: 'request failed' });
    expect(formatLogLine(line, { color: false })).toBe('09:05:07.012 ERROR [http] request failed requestId=a-1 path="/x y"\n    Error: boom\n        at here\n');
    expect(formatLogLine('not json', { color: false })).toBe('not json');
  });

  it('no plugin binds or logs `plugin` again (its context logger binds it): scanned in the sources', () => {
    const offenders: string[] = [];
    // Our sources only: an addon's installed dependencies (plugins/addon-geo/node_modules, made by the addon suite) are not walked.
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? (entry.name === 'node_modules' ? [] : walk(path.join(dir, entry.name))) : entry.isFile() && entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
      );
    for (const folder of ['plugins', 'kernel']) {
      for (const file of walk(path.join(REPO, folder))) {
        // The kernel logs lifecycle failures on its root logger, which binds no plugin.
        if (path.relative(REPO, file) === path.join('kernel', 'kernel.ts')) continue;
        const text = readFileSync(file, 'utf8');
        for (const match of text.matchAll(/\.(?:child|trace|debug|info|warn|error|fatal)\(\{(?:[^}]*,)?\s*plugin\s*[,:}]/g)) offenders.push(`${path.relative(REPO, file)}: ${match[0]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
