import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * Issue #20 items 8 and 9: every curl line of the README's tour, run as written (only `URL`
 * set to the live server's), twice on one server started the way `npm start` starts it, each
 * answering the status its comment promises; the checkout's streams/ stays untouched.
 */

const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (!hasCurl) console.log('[readme-tour] skipped: curl is not installed (apt-get install curl)');

interface TourCommand {
  text: string;
  /** The status promised by a trailing `# NNN` comment, if any. */
  status?: number;
}

async function tour(): Promise<TourCommand[]> {
  const readme = await readFile(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A short tour'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  const commands: TourCommand[] = [];
  let current = '';
  for (const line of block.split('\n')) {
    if (line.trim() === '' || line.startsWith('URL=')) continue;
    current += (current ? '\n' : '') + line;
    if (line.trimEnd().endsWith('\\')) continue;
    const status = /#\s*(\d{3})\b/.exec(current.slice(current.lastIndexOf("'") + 1))?.[1];
    commands.push({ text: current, status: status === undefined ? undefined : Number(status) });
    current = '';
  }
  return commands;
}

describe.skipIf(!hasCurl)('the README tour', () => {
  let server: ServerProcess;
  let data: string;
  beforeAll(async () => {
    data = await mkdtemp(path.join(os.tmpdir(), 'readme-tour-'));
    // As `npm start` does: a working copy (--data), a free port when the default is taken.
    server = await startServer(['--config', 'config/default.json', '--data', path.join(data, 'app'), '--fallback-port', '--port', '0']);
  });
  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exit;
    await rm(data, { recursive: true, force: true });
  });

  it('runs twice on one server, every command answering as its comment says, and leaves streams/ untouched', async () => {
    const commands = await tour();
    expect(commands.length).toBeGreaterThanOrEqual(10);
    expect(commands.every((c) => c.text.includes('$URL'))).toBe(true);
    for (let round = 1; round <= 2; round++) {
      for (const command of commands) {
        // Each curl also prints its status last (a later -w wins over the command's own).
        const script = `URL=${server.url}\ncurl() { command curl "$@" -w '\\n@@%{http_code}@@'; }\n${command.text}`;
        const out = execFileSync('bash', ['-c', script], { encoding: 'utf8' });
        if (command.text.includes('| head')) continue; // the pipe cuts the status line
        const status = Number(/@@(\d{3})@@/.exec(out)?.[1]);
        expect(status, `round ${round}: ${command.text}\n${out}`).toBe(command.status ?? 200);
      }
    }
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'streams'], { cwd: REPO, encoding: 'utf8' });
    expect(changed).toBe('');
  });
});
