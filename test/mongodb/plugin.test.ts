/**
 * The plugin in a whole app over real HTTP, with no MongoDB server: the kernel boots,
 * other sources keep serving, database streams answer 503, /readyz says not ready, and
 * bad database definitions are refused with a clear error.
 */
import { describe, expect, it } from 'vitest';
import { startApp } from '../helpers/app.js';
import { FAST_OPTIONS, UNREACHABLE_URL } from './helpers.js';

const config = {
  plugins: [{ name: 'mongodb', options: { connect_wait_ms: 100, retry_initial_ms: 50, retry_max_ms: 200 } }],
  mongodb: { connections: { default: { url: UNREACHABLE_URL, options: FAST_OPTIONS } } },
};

const streams = {
  books: { name: 'Books', fields: { id: 'integer', title: 'string' } },
  films: { name: 'Films', config: { source: { type: 'database' } }, fields: { id: 'integer', title: { type: 'string', unique: true } } },
};

describe('mongodb plugin without a reachable server', () => {
  it('boots, keeps serving other sources, answers 503 for database streams and reports not ready', async () => {
    const app = await startApp({ streams, data: { books: [{ id: 1, title: 'Dune' }] }, config });
    try {
      const books = await app.request('GET', '/api/streams/books/entries');
      expect(books.status).toBe(200);
      expect(books.json.data).toEqual([{ id: 1, title: 'Dune' }]);
      const films = await app.request('GET', '/api/streams/films/entries');
      expect(films.status).toBe(503);
      expect(films.json.errors[0].message).toMatch(/database connection "default" is not available/);
      const created = await app.request('POST', '/api/streams/films/entries', { title: 'x' });
      expect(created.status).toBe(503);
      const ready = await app.request('GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json.checks.mongodb).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('refuses a database definition naming an unknown connection: at boot (file named) and on the API (409)', async () => {
    await expect(
      startApp({ streams: { films: { config: { source: { type: 'database', connection: 'nope' } } } }, config }),
    ).rejects.toThrow(/films\.json.*not configured|not configured.*films/s);
    const app = await startApp({ streams: { books: streams.books }, config });
    try {
      const res = await app.request('POST', '/api/streams', { id: 'films', config: { source: { type: 'database', table: '$bad' } } });
      expect(res.status).toBe(409);
      expect(JSON.stringify(res.json.errors)).toMatch(/not a valid collection name/);
      expect((await app.request('GET', '/api/streams/films')).status).toBe(404);
    } finally {
      await app.close();
    }
  });

  it('with definitions stored in MongoDB, an unreachable server still boots (no streams yet, not ready)', async () => {
    const app = await startApp({
      config: { ...config, streams: { source: { type: 'database', connection: 'default', table: 'core_streams' } } },
    });
    try {
      const list = await app.request('GET', '/api/streams');
      expect(list.status).toBe(200);
      expect(list.json.data).toEqual([]);
      expect((await app.request('GET', '/readyz')).status).toBe(503);
    } finally {
      await app.close();
    }
  });
});

describe('config/mongodb.json (the multi-node example, no server)', () => {
  it('validates and boots a node from it while MongoDB is unreachable: no crash, not ready, clean shutdown', async () => {
    const previous = process.env.MONGODB_URL;
    process.env.MONGODB_URL = UNREACHABLE_URL;
    const { Kernel, loadConfigFile } = await import('../../kernel/index.js');
    const { HTTP_SERVER } = await import('../../plugins/http/index.js');
    const { request } = await import('undici');
    const file = new URL('../../config/mongodb.json', import.meta.url).pathname;
    const config = loadConfigFile(file, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
    expect(config.streams.source).toEqual({ type: 'database', connection: 'default', table: 'core_streams' });
    expect(config.streams.default_source).toBe('database');
    const kernel = new Kernel(config);
    try {
      await kernel.boot();
      const url = kernel.get(HTTP_SERVER).url;
      const ready = await request(`${url}/readyz`);
      expect(ready.statusCode).toBe(503);
      expect(JSON.parse(await ready.body.text()).checks.mongodb).toBe(false);
      const live = await request(`${url}/healthz`);
      expect(live.statusCode).toBe(200);
      await live.body.dump();
    } finally {
      await kernel.shutdown();
      if (previous === undefined) delete process.env.MONGODB_URL;
      else process.env.MONGODB_URL = previous;
    }
  });
});
