/**
 * Entry writes of the `database` source on the wire-level stand-in (the real driver; issue
 * #29 item 3, the parts left): a write with no intent (the bare Source contract: imports,
 * tools) raises `_rev` by one, never to a random value that can move it back; an entry write
 * the server applied but answered with an error leaves the node deciding its next write on
 * what is stored, not on what it predicted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SOURCES } from '../../plugins/sources/index.js';
import { STREAM_REGISTRY } from '../../plugins/streams/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { ON_WIRE, WireServer } from '../wire/server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function node(server: WireServer): Promise<TestApp> {
  const app = await startApp({
    streams: { films: { name: 'Films', config: { source: { type: 'database' } }, fields: { id: 'integer', title: 'string' } } },
    config: {
      plugins: [{ name: 'mongodb', options: { connect_wait_ms: 2000, retry_initial_ms: 50, retry_max_ms: 300 } }],
      mongodb: { connections: { default: { url: server.url(), database: 'streams', options: { serverSelectionTimeoutMS: 1000 } } } },
    },
  });
  cleanups.push(() => app.close());
  return app;
}

const revisionOf = (server: WireServer, id: number): unknown => server.stored('streams', 'films').find((d) => d._id === id)?._rev;

describe(`entry writes ${ON_WIRE}`, () => {
  it(`${ON_WIRE} a write with no intent stores the next revision (a random one could move it back)`, async () => {
    const server = await new WireServer().start();
    cleanups.push(() => server.close());
    const app = await node(server);
    const source = app.kernel.get(SOURCES).for(app.kernel.get(STREAM_REGISTRY).require('films'));
    await source.put(1, { id: 1, title: 'Alien' });
    expect(revisionOf(server, 1)).toBe(1);
    for (let i = 0; i < 3; i++) expect((await app.request('PATCH', '/api/streams/films/entries/1', { title: `Alien ${i}` })).status).toBe(200);
    expect(revisionOf(server, 1)).toBe(4);
    await source.put(1, { id: 1, title: 'Alien (1979)' });
    expect(revisionOf(server, 1)).toBe(5);
    expect((await app.request('GET', '/api/streams/films/entries/1')).json.data.title).toBe('Alien (1979)');
  });

  it(`${ON_WIRE} a PUT applied but answered with a write concern error: the node reads what is stored, and its next PUT is not a 409`, async () => {
    const server = await new WireServer().start();
    cleanups.push(() => server.close());
    const app = await node(server);
    expect((await app.request('POST', '/api/streams/films/entries', { id: 1, title: 'Alien' })).status).toBe(201);
    server.faults.afterApply('update', { kind: 'writeConcernError' }, { collection: 'films' });
    const ambiguous = await app.request('PUT', '/api/streams/films/entries/1', { id: 1, title: 'Aliens' });
    expect(ambiguous.status).toBeGreaterThanOrEqual(500);
    expect(server.stored('streams', 'films')[0]!.title).toBe('Aliens'); // it was applied
    expect((await app.request('GET', '/api/streams/films/entries/1')).json.data.title).toBe('Aliens');
    const next = await app.request('PUT', '/api/streams/films/entries/1', { id: 1, title: 'Aliens (1986)' });
    expect(next.status).toBe(200);
    expect(server.stored('streams', 'films')[0]).toMatchObject({ title: 'Aliens (1986)', _rev: 3 });
  });
});
