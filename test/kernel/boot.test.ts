import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOT, REPO, runToExit, startServer } from '../helpers/server-process.js';

/**
 * Spawns the real launcher against dist/ (built by `npm install`/`npm ci`): catches what
 * vitest cannot, such as ESM load-order problems in tsc output (a module used before it is evaluated).
 */

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'boot-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('node kernel/boot.js', () => {
  it('serves the embedded default app on a free port, prints the url line, and stops on SIGTERM with exit 0', async () => {
    // A copy, so the test never writes into the repository's own streams/.
    const app = path.join(tmp, 'default-app');
    await cp(path.join(REPO, 'streams'), path.join(app, 'streams'), { recursive: true });
    await cp(path.join(REPO, 'config', 'default.json'), path.join(app, 'config', 'default.json'));
    const running = await startServer(['--config', path.join(app, 'config', 'default.json'), '--port', '0']);
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(running.url).not.toMatch(/:0$/);
      const line = running.stdout().split('\n').find((l) => l.includes('"url"'))!;
      expect(JSON.parse(line)).toMatchObject({ url: running.url });

      const res = await request(`${running.url}/api/streams/books/entries/1`);
      expect(res.statusCode).toBe(200);
      const body = (await res.body.json()) as { data: { title: string } };
      expect(body.data.title).toBe('A Wizard of Earthsea');
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
  });

  it('a boot on node:http does not load Node\'s internal undici (node:http without its ES module facade)', async () => {
    // `import http from 'node:http'` makes Node 22+ read every export of node:http, and its lazy
    // WebSocket getters load the whole internal undici: ~25 ms of every boot (issue #33). Node 20
    // has no such getter, so there this holds either way; CI's Node 22, 24 and 26 are the check.
    const app = path.join(tmp, 'facade-app');
    await cp(path.join(REPO, 'streams'), path.join(app, 'streams'), { recursive: true });
    await cp(path.join(REPO, 'config', 'default.json'), path.join(app, 'config', 'default.json'));
    const probe = path.join(tmp, 'probe-launcher.mjs');
    await writeFile(
      probe,
      `process.on('exit', () => process.stdout.write('\\nundici:' + JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))) + '\\n'));\n` +
        `await import(${JSON.stringify(pathToFileURL(BOOT).href)});\n`,
    );
    const running = await startServer(['--config', path.join(app, 'config', 'default.json'), '--port', '0', '--transport', 'node'], REPO, probe);
    try {
      expect(running.stdout()).toContain('"transport":"node:http"');
      expect((await request(`${running.url}/api/streams/books/entries/1`)).statusCode).toBe(200);
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
    expect(running.stdout()).toContain('\nundici:[]\n');
  });

  it("an addon's own `import … from 'tsyringe'` meets the kernel's container (the kernel requires it, issue #33)", async () => {
    const app = path.join(tmp, 'tsyringe-app');
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(app, 'streams'), { recursive: true }));
    await writeFile(path.join(app, 'app.json'), JSON.stringify({ plugins: [path.join(REPO, 'test', 'fixtures', 'tsyringe-addon')] }));
    const running = await startServer(['--config', path.join(app, 'app.json'), '--port', '0']);
    try {
      expect(running.stdout()).toContain('{"tsyringe-addon":"one container"}');
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
  });

  it('prints the url line even at log level error', async () => {
    const app = path.join(tmp, 'quiet-app');
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(app, 'streams'), { recursive: true }));
    await writeFile(path.join(app, 'app.json'), JSON.stringify({ log: { level: 'error' } }));
    const running = await startServer(['--config', path.join(app, 'app.json'), '--port', '0']);
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
  });

  it('stops cleanly (exit 0) on a SIGTERM that arrives while it is still booting', async () => {
    const app = path.join(tmp, 'slow-app');
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(app, 'streams'), { recursive: true }));
    const addon = path.join(REPO, 'test', 'fixtures', 'slow-boot');
    await writeFile(path.join(app, 'app.json'), JSON.stringify({ plugins: [addon] }));
    const child = spawn(process.execPath, [BOOT, '--config', path.join(app, 'app.json'), '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"slow-boot":"booting"') && !child.killed) child.kill('SIGTERM');
    });
    expect(await exit).toBe(0);
    expect(out).toContain('"signal":"SIGTERM"');
  });

  it('takes --host and answers on it', async () => {
    const app = path.join(tmp, 'host-app');
    await writeFile(path.join(tmp, 'host.json'), JSON.stringify({ root: 'host-app', log: { level: 'warn' } }));
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(app, 'streams'), { recursive: true }));
    const running = await startServer(['--config', path.join(tmp, 'host.json'), '--port', '0', '--host', '127.0.0.1', '--log-level', 'info']);
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
      const res = await request(`${running.url}/healthz`);
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    } finally {
      running.child.kill('SIGINT');
    }
    expect(await running.exit).toBe(0);
  });

  it('exits non-zero naming the file and JSON path of a bad config', async () => {
    const file = path.join(tmp, 'bad-config.json');
    await writeFile(file, JSON.stringify({ http: { port: 'x' } }));
    const { code, stderr } = await runToExit(['--config', file]);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`${file} at /http/port: must be integer`);
  });

  it('exits non-zero naming the file and JSON path of an invalid stream definition', async () => {
    const app = path.join(tmp, 'bad-def');
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(app, 'streams'), { recursive: true }));
    await writeFile(path.join(app, 'app.json'), '{}');
    await writeFile(path.join(app, 'streams', 'planets.json'), JSON.stringify({ name: 'x'.repeat(60) }));
    const { code, stderr } = await runToExit(['--config', path.join(app, 'app.json'), '--port', '0']);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`${path.join(app, 'streams', 'planets.json')} at /name: must NOT have more than 50 characters`);
  });

  it('explains missing and unknown flags', async () => {
    expect((await runToExit([])).stderr).toMatch(/--config <file> is required/);
    expect((await runToExit(['--config', 'x', '--port', 'abc'])).stderr).toMatch(/--port must be an integer/);
    expect((await runToExit(['--bogus'])).code).toBe(1);
  });
});
