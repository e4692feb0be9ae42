import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * Issue #16 item 3 against the launcher (`node kernel/boot.js`): entries load at boot, not
 * at the first request; /healthz answers while they load; /readyz is 503 until they are
 * servable and its first 200 comes with every entry served; no log line says ready before,
 * and a large stream logs its progress.
 */
const COUNT = 40_000;

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

describe('boot loads entries and readiness is true', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'readiness-boot-'));
    const data = path.join(dir, 'streams', 'data', 'items');
    mkdirSync(data, { recursive: true });
    writeFileSync(path.join(dir, 'streams', 'items.json'), JSON.stringify({ id: 'items', name: 'Items', fields: { id: 'integer', title: 'string', n: 'integer' } }));
    for (let i = 1; i <= COUNT; i++) writeFileSync(path.join(data, `${i}.json`), `{"id":${i},"title":"item ${i}","n":${i % 97}}`);
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ log: { level: 'info' }, http: { host: '127.0.0.1' } }));
  }, 120_000);
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exit;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /healthz and 503 on /readyz while loading, then 200 with every entry servable', async () => {
    server = await startServer(['--config', path.join(dir, 'config.json'), '--port', '0']);
    const url = server.url;
    let notReady = 0;
    let healthyWhileLoading = 0;
    const deadline = Date.now() + 60_000;
    for (;;) {
      // What the node printed before this request: no line may say ready when /readyz then says not.
      const printed = server.stdout();
      const ready = await get(`${url}/readyz`);
      if (ready.status === 200) break;
      expect(ready.status).toBe(503);
      notReady++;
      expect(printed).not.toMatch(/"msg":"ready/);
      if ((await get(`${url}/healthz`)).status === 200) healthyWhileLoading++;
      expect(Date.now()).toBeLessThan(deadline);
    }
    // The first 200 comes with servable entries: the last one, and all of them in a count.
    const last = await get(`${url}/api/streams/items/entries/${COUNT}`);
    expect(last.status).toBe(200);
    expect(JSON.parse(last.body).data.title).toBe(`item ${COUNT}`);
    const list = await get(`${url}/api/streams/items/entries?per_page=1&where[n]=0`);
    expect(JSON.parse(list.body).meta.pagination?.total ?? JSON.parse(list.body).meta.total).toBe(Math.floor(COUNT / 97));
    expect(notReady).toBeGreaterThan(0);
    expect(healthyWhileLoading).toBeGreaterThan(0);
    // The ready line is written before /readyz turns 200, but reaches this process through a pipe.
    const current = server;
    await eventually(async () => expect(current.stdout()).toMatch(/"msg":"ready/), 5_000);
    const lines = server.stdout().split('\n');
    const listening = lines.findIndex((l) => l.includes('"msg":"listening"'));
    const ready = lines.findIndex((l) => l.includes('"msg":"ready'));
    expect(listening).toBeGreaterThanOrEqual(0);
    expect(ready).toBeGreaterThan(listening);
    expect(lines[ready]).toContain(`"entries":${COUNT}`);
    // A stream this large reports its load.
    expect(lines.some((l) => l.includes('"msg":"loading entries'))).toBe(true);
    // One server per data folder (#27): the next test's server needs this one gone.
    server.child.kill('SIGTERM');
    expect(await server.exit).toBe(0);
  }, 90_000);

  it('stops at once on SIGTERM during the load (exit 0, no load error, never ready)', async () => {
    const early = await startServer(['--config', path.join(dir, 'config.json'), '--port', '0']);
    expect((await get(`${early.url}/readyz`)).status).toBe(503);
    const sent = Date.now();
    early.child.kill('SIGTERM');
    expect(await early.exit).toBe(0);
    // The load stops at its next slice instead of reading the remaining files first.
    expect(Date.now() - sent).toBeLessThan(5_000);
    expect(early.stdout()).not.toMatch(/could not be loaded/);
    expect(early.stdout()).not.toMatch(/"msg":"ready/);
  }, 60_000);
});
