import { cp, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNativeUws } from '../../plugins/http/uws-loader.js';
import { rawHttp } from '../helpers/raw-http.js';
import { REPO, runToExit, startServer } from '../helpers/server-process.js';

/**
 * What an operator sees on this Node, per transport: the boot line names the transport
 * (and on fallback why), a create and a read work, an HTTP/1.0 request is answered, the
 * process stays up, and SIGTERM exits 0. Runs under whatever Node runs the suite (CI: 20, 22, 24).
 */

const native = loadNativeUws();
let tmp: string;
let config: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'runtime-'));
  // A copy of the embedded app, so nothing is written into the repository.
  await cp(path.join(REPO, 'streams'), path.join(tmp, 'streams'), { recursive: true });
  await cp(path.join(REPO, 'config', 'default.json'), path.join(tmp, 'config', 'default.json'));
  config = path.join(tmp, 'config', 'default.json');
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

function http10(url: string, target: string): Promise<string> {
  return rawHttp(url, `GET ${target} HTTP/1.0\r\nHost: localhost\r\n\r\n`, 2000);
}

const cases = [
  { flag: 'auto', expected: native.ok ? /^uWebSockets\.js / : /^node:http$/ },
  { flag: 'node', expected: /^node:http$/ },
  ...(native.ok ? [{ flag: 'uws', expected: /^uWebSockets\.js / }] : []),
];
if (!native.ok) console.log(`[runtime] --transport uws case skipped (it must exit 1 instead, tested below): ${native.reason}`);

describe.each(cases)(`Node ${process.versions.node}, --transport $flag`, ({ flag, expected }) => {
  it('boots, names its transport, creates, reads, answers HTTP/1.0, stays up, exits 0 on SIGTERM', async () => {
    const running = await startServer(['--config', config, '--port', '0', '--transport', flag]);
    try {
      const line = JSON.parse(running.stdout().split('\n').find((l) => l.includes('"url"'))!) as Record<string, string>;
      expect(line.transport).toMatch(expected);
      if (flag === 'auto' && !native.ok) {
        // Why node:http serves is said once, in its own warning line, never again in the banner (#32).
        const warning = JSON.parse(running.stdout().split('\n').find((l) => l.includes('falling back to node:http'))!) as Record<string, string>;
        expect(warning.reason).toMatch(/no native uWebSockets\.js for Node/);
        expect(warning.hint).toMatch(/node:http/);
        expect(running.stdout().match(/falling back to node:http/g)).toHaveLength(1);
        expect(line.reason).toBeUndefined();
      }
      const created = await request(`${running.url}/api/streams/books/entries`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'The Dispossessed', author: 1, year: 1974 }),
      });
      expect(created.statusCode).toBe(201);
      const id = ((await created.body.json()) as { data: { id: number } }).data.id;
      const read = await request(`${running.url}/api/streams/books/entries/${id}`);
      expect(read.statusCode).toBe(200);
      expect(((await read.body.json()) as { data: { title: string } }).data.title).toBe('The Dispossessed');

      const old = await http10(running.url, `/api/streams/books/entries/${id}`);
      if (line.transport === 'node:http') {
        expect(old).toMatch(/^HTTP\/1\.1 200 /);
        expect(old).toContain('The Dispossessed');
      } else {
        expect(old).toMatch(/^HTTP\/1\.1 505 /); // uWS's own answer (docs/api.md, Transports)
      }
      const alive = await request(`${running.url}/healthz`);
      expect(alive.statusCode).toBe(200);
      await alive.body.text();
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
  });
});

describe('listen failures are one clean line and exit 1', () => {
  it('a port in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const { code, stderr } = await runToExit(['--config', config, '--port', String(port)]);
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(`streams-kernel: port ${port} on 127.0.0.1 is already in use (choose another with --port, or 0 for a free one)`);
    } finally {
      blocker.close();
    }
  });

  it('with --fallback-port, a port in use gives a free port instead (the url line says which)', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const running = await startServer(['--config', config, '--port', String(port), '--fallback-port']);
      expect(running.url).not.toBe(`http://127.0.0.1:${port}`);
      expect(running.stdout()).toContain(`port ${port} on 127.0.0.1 is in use: listening on a free port instead`);
      running.child.kill('SIGTERM');
      expect(await running.exit).toBe(0);
    } finally {
      blocker.close();
    }
  });

  it('a --host that is not an address of this machine', async () => {
    const { code, stderr } = await runToExit(['--config', config, '--port', '0', '--host', 'no-such-host.invalid']);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/is not an address of this machine/);
  });

  it('--transport uws without a native binary names each candidate (or boots when one loads)', async () => {
    if (native.ok) {
      const running = await startServer(['--config', config, '--port', '0', '--transport', 'uws']);
      running.child.kill('SIGTERM');
      expect(await running.exit).toBe(0);
      return;
    }
    const { code, stderr } = await runToExit(['--config', config, '--port', '0', '--transport', 'uws']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/http\.transport is "uws" but no native uWebSockets\.js for Node .*uws-pack.*@btc-vision/);
  });

  it('a bad --transport value', async () => {
    const { code, stderr } = await runToExit(['--config', config, '--transport', 'fast']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/--transport must be auto, uws or node/);
  });
});
