/**
 * Issue #19 item 1, end to end: two nodes serve one `database` stream from one collection
 * (the mingo stand-in for a MongoDB server, test/mongodb/fake-server.ts, shared by both);
 * a write through node A reaches node B's Server-Sent Events subscribers through the change
 * stream, and node A's own subscribers get it once, not a second time from the stream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { MongoSource } from '../../plugins/mongodb/source.js';
import { SOURCES } from '../../plugins/sources/index.js';
import { startApp } from '../helpers/app.js';
import { fakeConnections } from '../mongodb/fake-server.js';
import { cleanups, listen, runCleanups, until } from './clients.js';
import { films } from './films-app.js';

afterEach(runCleanups);

describe('realtime: changes made by another node of a database stream', () => {
  it('reach the other node\'s subscribers; a node\'s own write is delivered once', async () => {
    const fake = fakeConnections();
    // The `database` source type over the shared stand-in (the mongodb plugin would connect to a server).
    const database = definePlugin({
      name: 'stand-in-database',
      requires: ['sources'],
      register({ use }) {
        use(SOURCES).registerType('database', (context) => new MongoSource(context, fake.connections, { connectWaitMs: 100 }));
      },
    });
    const stream = { ...films, config: { source: { type: 'database' } } };
    const nodes = [];
    for (let i = 0; i < 2; i++) {
      const app = await startApp({ streams: { films: stream }, config: { http: { transport: 'node' } }, plugins: [database] });
      cleanups.push(() => app.close());
      nodes.push(app);
    }
    const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
    // Each node opens its source (and its change stream) on first use.
    for (const app of nodes) expect((await app.request('GET', '/api/streams/films/entries')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    const onA = listen(`${a.url}/api/streams/films/changes`);
    const onB = listen(`${b.url}/api/streams/films/changes?where[year]=1980&constraint[year]=>`);
    await Promise.all([onA.opened, onB.opened]);
    expect((await a.request('POST', '/api/streams/films/entries', { id: 1, title: 'Aliens', year: 1986, secret: 'x' })).status).toBe(201);
    expect((await a.request('POST', '/api/streams/films/entries', { id: 2, title: 'Alien', year: 1979 })).status).toBe(201);
    expect((await a.request('PATCH', '/api/streams/films/entries/1', { title: 'Aliens (1986)' })).status).toBe(200);
    await until(() => onB.events.length === 2 && onA.events.length === 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(onB.events.map((e) => `${e.event} ${String(e.data.id)}`)).toEqual(['created 1', 'updated 1']);
    expect(onB.events[1]!.data.data).toEqual({ id: 1, title: 'Aliens (1986)', year: 1986 });
    expect(onA.events.map((e) => `${e.event} ${String(e.data.id)}`)).toEqual(['created 1', 'created 2', 'updated 1']);
    // And back: B's delete reaches A.
    expect((await b.request('DELETE', '/api/streams/films/entries/2')).status).toBe(204);
    await until(() => onA.events.length === 4);
    expect(onA.events[3]).toMatchObject({ event: 'deleted', data: { stream: 'films', id: 2, data: null } });
  });
});
