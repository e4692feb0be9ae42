import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * Issue #27 item 5: limits on what lands on disk. `streams.files.max_bytes` skips (and reports)
 * larger files; thousands of files landing at once, or a 200 MB file, never stall the server:
 * /healthz is polled all along from this process while another process writes the files.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const fields = { id: 'integer', name: 'string' };

describe('streams.files.max_bytes', () => {
  it('an entry file above it is reported in /readyz, not served, its writes refused and its bytes kept', async () => {
    app = await startApp({ streams: { things: { fields } }, data: { things: [{ id: 1, name: 'one' }] }, config: { streams: { files: { max_bytes: 1024 } } } });
    const file = path.join(app.root, 'streams/data/things/2.json');
    const big = JSON.stringify({ id: 2, name: 'x'.repeat(2000) });
    writeFileSync(file, big);
    await eventually(async () => expect(JSON.stringify((await app!.request('GET', '/readyz')).json.details?.streams?.degraded ?? [])).toContain('max_bytes'));
    // Not served, and a read says why (not a 404 claiming there is no such entry).
    const read = await app.request('GET', '/api/streams/things/entries/2');
    expect(read.status).toBe(409);
    expect(read.json.errors[0].message).toMatch(/max_bytes/);
    expect((await app.request('PATCH', '/api/streams/things/entries/2', { name: 'y' })).status).toBe(409);
    expect(readFileSync(file, 'utf8')).toBe(big);
    expect((await app.request('GET', '/api/streams/things/entries/1')).status).toBe(200);
  });

  it('a definition file above it is skipped at boot (the others serve) and listed in /readyz', async () => {
    app = await startApp({
      streams: { things: { fields } },
      files: { 'streams/huge.json': JSON.stringify({ id: 'huge', description: 'x'.repeat(4096), fields }) },
      config: { streams: { files: { max_bytes: 2048 } } },
    });
    expect((await app.request('GET', '/api/streams/things')).status).toBe(200);
    expect((await app.request('GET', '/api/streams/huge')).status).toBe(404);
    expect(JSON.stringify((await app.request('GET', '/readyz')).json.details?.streams?.degraded ?? [])).toContain('huge.json');
  });
});

describe('files landing never stall the server', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'landing-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  let server: ServerProcess | undefined;
  afterEach(async () => {
    server?.child.kill('SIGTERM');
    await server?.exit;
    server = undefined;
  });

  async function boot(name: string): Promise<{ url: string; folder: string }> {
    const root = path.join(tmp, name);
    const folder = path.join(root, 'streams/data/things');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(root, 'streams/things.json'), JSON.stringify({ id: 'things', fields }));
    writeFileSync(path.join(folder, '1.json'), JSON.stringify({ id: 1, name: 'one' }));
    writeFileSync(path.join(root, 'app.json'), JSON.stringify({ log: { level: 'error' } }));
    server = await startServer(['--config', path.join(root, 'app.json'), '--port', '0']);
    // The stream's folder is watched from its first use.
    expect((await request(`${server.url}/api/streams/things/entries/1`)).statusCode).toBe(200);
    return { url: server.url, folder };
  }

  /** Run `script` in another node process while /healthz is polled; the slowest answer, in ms. */
  async function slowestHealthzWhile(url: string, script: string, done: () => Promise<boolean>): Promise<number> {
    let slowest = 0;
    let writing = true;
    const writer = new Promise((resolve) => spawn(process.execPath, ['-e', script], { stdio: 'inherit' }).on('exit', resolve)).then(() => (writing = false));
    const deadline = Date.now() + 20_000;
    while (writing || !(await done())) {
      if (Date.now() > deadline) throw new Error('the files were not served within 20 s');
      const started = performance.now();
      const res = await request(`${url}/healthz`);
      await res.body.dump();
      expect(res.statusCode).toBe(200);
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((r) => setTimeout(r, 5));
    }
    await writer;
    return slowest;
  }

  async function total(url: string): Promise<number> {
    const res = await request(`${url}/api/streams/things/entries?per_page=1`);
    return ((await res.body.json()) as { meta: { total: number } }).meta.total;
  }

  // The target is 100 ms (measured: 20-35 ms here); asserted with room for a busy CI machine.
  const STALL_LIMIT_MS = 500;

  it('5,000 files dropped into a watched folder: all served, /healthz answers quickly all along', async () => {
    const { url, folder } = await boot('many');
    const script = `const fs=require('fs');for(let i=2;i<=5001;i++)fs.writeFileSync(${JSON.stringify(folder)}+'/'+i+'.json','{"id":'+i+',"name":"n'+i+'"}')`;
    const slowest = await slowestHealthzWhile(url, script, async () => (await total(url)) === 5001);
    expect(await total(url)).toBe(5001);
    expect(slowest).toBeLessThan(STALL_LIMIT_MS);
  });

  it('a folder of 5,000 files moved in over the watched one: all served, no stall', async () => {
    const { url, folder } = await boot('moved');
    const staging = path.join(tmp, 'moved-staging');
    const script = `const fs=require('fs');fs.mkdirSync(${JSON.stringify(staging)});for(let i=1;i<=5000;i++)fs.writeFileSync(${JSON.stringify(staging)}+'/'+i+'.json','{"id":'+i+',"name":"n'+i+'"}');fs.rmSync(${JSON.stringify(folder)},{recursive:true});fs.renameSync(${JSON.stringify(staging)},${JSON.stringify(folder)})`;
    const slowest = await slowestHealthzWhile(url, script, async () => (await total(url)) === 5000);
    expect(slowest).toBeLessThan(STALL_LIMIT_MS);
  });

  it('a 200 MB file is skipped (above max_bytes), reported, and never stalls /healthz', async () => {
    const { url, folder } = await boot('big');
    const file = path.join(folder, 'big.json');
    const script = `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(file)},'w');fs.writeSync(fd,'{"id": 7, "name": "');for(let i=0;i<200;i++)fs.writeSync(fd,Buffer.alloc(1<<20,97));fs.writeSync(fd,'"}');fs.closeSync(fd)`;
    const reported = async (): Promise<boolean> => {
      const res = await request(`${url}/readyz`);
      return JSON.stringify(await res.body.json()).includes('max_bytes');
    };
    const slowest = await slowestHealthzWhile(url, script, reported);
    expect(slowest).toBeLessThan(STALL_LIMIT_MS);
    expect((await request(`${url}/api/streams/things/entries/7`)).statusCode).toBe(404);
  });
});
