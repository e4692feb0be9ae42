/**
 * Index builds never take the fleet down (issue #15 item 5), on the stand-in replica set
 * (fake-server.ts, where an index build can be made slow or fail): a node boots, is ready
 * and serves while its indexes build, /readyz details show the build's progress, and a
 * failed build is reported without taking the node out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MongoNetworkError } from 'mongodb';
import type { TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { ON_STAND_IN, StandInServer } from './fake-server.js';
import { startNodes } from './stand-in-app.js';

const streams = {
  films: { name: 'Films', config: { source: { type: 'database' } }, fields: { id: 'integer', title: { type: 'string', unique: true } } },
};

let nodes: TestApp[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.close();
});

describe(`index builds ${ON_STAND_IN}`, () => {
  it(`${ON_STAND_IN} a slow build: both nodes are ready and serve meanwhile, /readyz shows its progress, then nothing`, async () => {
    const server = new StandInServer();
    const release = server.hold('createIndex'); // every build waits until the test lets it go
    nodes = await startNodes(server, 2, { streams });
    const [a, b] = nodes as [TestApp, TestApp];
    for (const node of [a, b]) {
      const ready = await node.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json.details.mongodb.index_builds).toEqual([
        expect.objectContaining({ stream: 'films', collection: 'films', state: 'building', done: 0, total: 2 }),
      ]);
    }
    expect((await a.request('POST', '/api/streams/films/entries', { id: 1, title: 'Alien' })).status).toBe(201);
    expect((await b.request('GET', '/api/streams/films/entries/1')).json.data).toEqual({ id: 1, title: 'Alien' });
    expect(server.collections.get('films')!.indexNames.size).toBe(0); // still building
    release();
    await eventually(async () => {
      const ready = await a.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json.details?.mongodb).toBeUndefined();
    });
    expect([...server.collections.get('films')!.indexNames].sort()).toEqual(['key_order', 'unique_title']);
  });

  it(`${ON_STAND_IN} every read carries maxTimeMS (query_timeout_ms): gets, lists, counts, eager loads, the key maximum`, async () => {
    const server = new StandInServer();
    nodes = await startNodes(server, 1, {
      streams: { ...streams, films: { ...streams.films, fields: { ...streams.films.fields, id: { type: 'integer', config: { default: 'increment' } } } } },
      config: { plugins: [{ name: 'mongodb', options: { connect_wait_ms: 500, retry_initial_ms: 20, retry_max_ms: 300, query_timeout_ms: 1234 } }] },
    });
    const [a] = nodes as [TestApp];
    expect((await a.request('POST', '/api/streams/films/entries', { title: 'Alien' })).status).toBe(201);
    await a.request('GET', '/api/streams/films/entries/1');
    await a.request('GET', '/api/streams/films/entries?where[title]=A%25&constraint[title]=LIKE');
    await a.request('PATCH', '/api/streams/films/entries/1', { title: 'Aliens' });
    expect(server.readLimits.length).toBeGreaterThan(4);
    expect(server.readLimits.filter((r) => r.maxTimeMS !== 1234)).toEqual([]);
  });

  it(`${ON_STAND_IN} a failed build is reported in /readyz details; the node stays ready and serving`, async () => {
    const server = new StandInServer();
    server.failNext('createIndex', () => new MongoNetworkError('connection reset during createIndexes (stand-in)'));
    nodes = await startNodes(server, 1, { streams });
    const [a] = nodes as [TestApp];
    await eventually(async () => {
      const ready = await a.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json.details.mongodb.index_builds).toEqual([expect.objectContaining({ stream: 'films', state: 'failed', reason: expect.stringMatching(/connection reset/) })]);
    });
    expect((await a.request('POST', '/api/streams/films/entries', { id: 1, title: 'Alien' })).status).toBe(201);
    expect(server.collections.get('films')!.docs).toHaveLength(1);
  });
});
