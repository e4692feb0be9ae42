import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../helpers/server-process.js';

/**
 * Issue #33 (group commit through the filebase write journal): the real launcher under 50
 * concurrent HTTP writers (PATCHes of 40 entries and creates), killed with SIGKILL in the middle
 * of the burst, then started again on the same folder. Every write the server acknowledged (200
 * or 201 received) must be there after the restart: each PATCHed entry at least at its last
 * acknowledged version, each created entry present.
 */

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'crash-http-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const CLIENTS = 50;
const KEYS = 40;

async function app(): Promise<string> {
  await mkdir(path.join(tmp, 'streams', 'data', 'items'), { recursive: true });
  await writeFile(path.join(tmp, 'streams', 'items.json'), JSON.stringify({ id: 'items', config: { source: { type: 'filebase', format: 'json' } }, fields: { id: 'integer', version: 'integer', note: 'string' } }));
  for (let key = 1; key <= KEYS; key++) await writeFile(path.join(tmp, 'streams', 'data', 'items', `${key}.json`), JSON.stringify({ id: key, version: 0, note: 'seed' }));
  await writeFile(path.join(tmp, 'app.json'), JSON.stringify({ log: { level: 'warn' } }));
  return path.join(tmp, 'app.json');
}

describe('kill -9 under 50 concurrent HTTP writers (real server, filebase)', () => {
  it('loses no acknowledged PATCH or create', async () => {
    const config = await app();
    const server = await startServer(['--config', config, '--port', '0']);
    const agent = new Agent({ connections: CLIENTS });
    const acked = new Map<number, number>();
    const created: number[] = [];
    let version = 0;
    let acks = 0;
    let killed = false;
    const client = async (n: number): Promise<void> => {
      for (let i = 0; !killed; i++) {
        try {
          if (i % 4 === 3) {
            const id = 1000 + n * 10_000 + i;
            const res = await request(`${server.url}/api/streams/items/entries`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, version: 1, note: 'created' }) });
            await res.body.text();
            if (res.statusCode === 201) created.push(id);
          } else {
            const v = ++version;
            const key = (v % KEYS) + 1;
            const res = await request(`${server.url}/api/streams/items/entries/${key}`, { method: 'PATCH', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: v }) });
            await res.body.text();
            if (res.statusCode === 200) acked.set(key, Math.max(acked.get(key) ?? 0, v));
          }
          if (++acks === 1500 && !killed) {
            killed = true;
            server.child.kill('SIGKILL');
          }
        } catch {
          return; // the connection died with the server
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
    await server.exit;
    await agent.close();
    expect(acked.size).toBe(KEYS);
    expect(created.length).toBeGreaterThan(50);

    const again = await startServer(['--config', config, '--port', '0']);
    try {
      for (const [key, v] of acked) {
        const res = await request(`${again.url}/api/streams/items/entries/${key}`);
        const body = (await res.body.json()) as { data: { version: number } };
        expect(body.data.version, `entry ${key}`).toBeGreaterThanOrEqual(v);
      }
      for (const id of created) {
        const res = await request(`${again.url}/api/streams/items/entries/${id}`);
        await res.body.text();
        expect(res.statusCode, `created entry ${id}`).toBe(200);
      }
    } finally {
      again.child.kill('SIGTERM');
      await again.exit;
    }
  });
});
