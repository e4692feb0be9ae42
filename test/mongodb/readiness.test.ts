/**
 * Readiness tells the truth (issue #29 item 4). A unique index that cannot be built over
 * stored duplicates is shown in /readyz (stream, field, one duplicate value): a whole app
 * with the real driver on the wire-level stand-in. The plugin's shutdown without the http
 * plugin loaded (no `http` config section) resolves: no server needed.
 */
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import mongodbPlugin from '../../plugins/mongodb/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { silentLogger } from '../sources/harness.js';
import { ON_WIRE, WireServer } from '../wire/server.js';
import { mongoConfig } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('readiness of the mongodb plugin', () => {
  it(`${ON_WIRE} a unique index that failed on stored duplicates is in /readyz with the stream, the field and one duplicate value`, async () => {
    const server = await new WireServer().start();
    cleanups.push(() => server.close());
    const writer = new MongoClient(server.url());
    cleanups.push(() => writer.close(true));
    await writer.db('streams').collection<{ _id: number; title: string }>('films').insertMany([
      { _id: 1, title: 'Alien' },
      { _id: 2, title: 'Alien' },
    ]);
    const app: TestApp = await startApp({
      streams: { films: { name: 'Films', config: { source: { type: 'database' } }, fields: { id: 'integer', title: { type: 'string', unique: true } } } },
      config: {
        plugins: [{ name: 'mongodb', options: { connect_wait_ms: 2000, retry_initial_ms: 50, retry_max_ms: 300 } }],
        mongodb: { connections: { default: { url: server.url(), database: 'streams', options: { serverSelectionTimeoutMS: 1000 } } } },
      },
    });
    cleanups.push(() => app.close());
    await eventually(async () => {
      const ready = await app.request('GET', '/readyz');
      expect(ready.status).toBe(200); // the stream serves; the rule still checks each write
      expect(ready.json.details.mongodb.unique_index_failures).toEqual([
        expect.objectContaining({ stream: 'films', collection: 'films', field: 'title', index: 'unique_title', duplicate: 'Alien' }),
      ]);
    });
  });

  it('(no server) shutdown without the http plugin loaded resolves', async () => {
    const plugin = (mongodbPlugin as unknown as () => { register: (c: unknown) => void; shutdown: (c: unknown) => Promise<void> })();
    // Without the http plugin its settings section is not there.
    const config = { ...mongoConfig({}) } as Record<string, unknown>;
    delete config.http;
    const stub = { registerType: () => undefined, addCheck: () => undefined, registerStore: () => undefined };
    plugin.register({ provide: () => undefined, use: () => stub, find: () => undefined, config, logger: silentLogger, options: { connect_wait_ms: 10, retry_initial_ms: 10, retry_max_ms: 20, query_timeout_ms: 100 } });
    await expect(plugin.shutdown({ config })).resolves.toBeUndefined();
  });
});
