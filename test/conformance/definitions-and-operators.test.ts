import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { runToExit, startServer } from '../helpers/server-process.js';
import { topLevelKeys } from '../helpers/json-keys.js';

/** Issue #20 items 6 and 7: definitions checked consistently; operators get clear lines. */

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'conformance-defs-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

/** A fresh app folder with these definitions (and files); returns its config path. */
async function appWith(name: string, streams: Record<string, unknown>, files: Record<string, string> = {}): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(path.join(dir, 'streams', 'data'), { recursive: true });
  for (const [id, definition] of Object.entries(streams)) await writeFile(path.join(dir, 'streams', `${id}.json`), JSON.stringify(definition));
  for (const [relative, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), text);
  }
  await writeFile(path.join(dir, 'app.json'), '{}');
  return path.join(dir, 'app.json');
}

describe('definitions checked consistently', () => {
  it('a source type this server does not implement is refused at boot, saying so', async () => {
    const config = await appWith('fs', { a: { config: { source: { type: 'filesystem' } }, fields: { id: 'integer' } } });
    const { code, stderr } = await runToExit(['--config', config, '--port', '0']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/source type "filesystem" is a Laravel Streams type this server does not implement/);
  });

  it('database without the MongoDB plugin says to load it', async () => {
    const config = await appWith('db', { a: { config: { source: { type: 'database' } }, fields: { id: 'integer' } } });
    const { code, stderr } = await runToExit(['--config', config, '--port', '0']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/needs the MongoDB plugin: add "mongodb" to "plugins"/);
  });

  it('an unknown cache store is a boot error naming the path, not a 500 later', async () => {
    const config = await appWith('cache', { a: { config: { cache: { enabled: true, store: 'redis' } }, fields: { id: 'integer' } } });
    const { code, stderr } = await runToExit(['--config', config, '--port', '0']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/a\.json at \/config\/cache\/store: unknown cache store "redis" \(known: memory\)/);
  });

  it('a relationship to a stream that does not exist boots with one clear line, and log lines never repeat a key', async () => {
    const config = await appWith(
      'dangling',
      { books: { fields: { id: 'integer', author: { type: 'relationship', config: { related: 'authors' } } } } },
      { 'streams/data/books/1.json': '{"id":1,"author":3}', 'streams/data/books/2.json': '{not json' },
    );
    const running = await startServer(['--config', config, '--port', '0']);
    try {
      const res = await request(`${running.url}/api/streams/books/entries/1`);
      expect(res.statusCode).toBe(200);
      expect(((await res.body.json()) as { data: { author: number } }).data.author).toBe(3);
      // The unreadable file's warning is logged while loading: wait for it.
      await request(`${running.url}/api/streams/books/entries`).then((r) => r.body.text());
    } finally {
      running.child.kill('SIGTERM');
      await running.exit;
    }
    const lines = running.stdout().split('\n').filter((l) => l.startsWith('{'));
    const dangling = lines.filter((l) => l.includes('relates to stream [authors], which does not exist'));
    expect(dangling).toHaveLength(1);
    expect(JSON.parse(dangling[0]!)).toMatchObject({ stream: 'books', path: '/fields/author/config/related', related: 'authors' });
    expect(lines.some((l) => l.includes('skipping unreadable entry file'))).toBe(true);
    for (const line of lines) {
      const keys = topLevelKeys(line);
      expect(keys, line).toEqual([...new Set(keys)]);
    }
  });
});

describe('over the API', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('a relationship to a stream that does not exist is a 409 naming it', async () => {
    app = await startApp({ streams: { authors: { fields: { id: 'integer' } } } });
    const bad = await app.request('POST', '/api/streams', { id: 'books', fields: { id: 'integer', writer: { type: 'relationship', config: { related: 'writers' } } } });
    expect(bad.status).toBe(409);
    expect(bad.json.errors[0].message).toMatch(/relates to stream \[writers\], which does not exist/);
    expect(bad.json.errors[0].meta.field).toBe('/fields/writer/config/related');
    const good = await app.request('POST', '/api/streams', { id: 'books', fields: { id: 'integer', writer: { type: 'relationship', config: { related: 'authors' } } } });
    expect(good.status).toBe(201);
  });
});
