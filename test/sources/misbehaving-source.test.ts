import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { REPO, startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * #30 item 2 against the launcher: a source factory that throws marks its stream unserved
 * (404 with the reason, named by /readyz) and the node serves the rest; a promise some addon
 * left rejected is logged and the process keeps serving.
 */
async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(url);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('a misbehaving source addon', () => {
  let dir: string;
  let server: ServerProcess | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'misbehaving-source-'));
    mkdirSync(path.join(dir, 'streams', 'data', 'films'), { recursive: true });
    writeFileSync(path.join(dir, 'streams', 'films.json'), JSON.stringify({ id: 'films', name: 'Films', fields: { id: 'integer', title: 'string' } }));
    writeFileSync(path.join(dir, 'streams', 'data', 'films', '1.json'), '{"id":1,"title":"Alien"}');
    writeFileSync(path.join(dir, 'streams', 'broken.json'), JSON.stringify({ id: 'broken', name: 'Broken', config: { source: { type: 'broken' } }, fields: { id: 'integer' } }));
    writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ log: { level: 'info' }, plugins: [{ name: path.join(REPO, 'test/fixtures/misbehaving-addon') }] }));
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exit;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the other streams, answers 404 naming the reason for the broken one, and /readyz names it', async () => {
    server = await startServer(['--config', path.join(dir, 'config.json'), '--port', '0']);
    const url = server.url;
    const ready = await eventually(async () => {
      const answer = await get(`${url}/readyz`);
      expect(answer.status).toBe(200);
      return answer.body;
    }, 10_000);
    expect(JSON.stringify(ready)).toContain('"stream":"broken","reason":"its source (type \\"broken\\", plugin \\"misbehaving\\") could not be created: the broken source cannot start"');
    const films = await get(`${url}/api/streams/films/entries/1`);
    expect(films.status).toBe(200);
    const broken = await get(`${url}/api/streams/broken/entries`);
    expect(broken.status).toBe(404);
    expect(JSON.stringify(broken.body)).toContain('Stream [broken] is not served: its source (type \\"broken\\", plugin \\"misbehaving\\") could not be created: the broken source cannot start.');
    // The forgotten rejection was logged, and the process still serves.
    await eventually(async () => expect(server!.stdout()).toContain('unhandled promise rejection (a bug: the node keeps serving)'));
    expect((await get(`${url}/api/streams/films/entries/1`)).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  }, 30_000);
});
