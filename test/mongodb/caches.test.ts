/**
 * Caches follow the database (issue #15 item 3), two kernels on the stand-in replica set:
 * a stream with `config.cache` keeps query results per node, and another node's write
 * must drop them (through the change stream of the entry collection); while that stream
 * is down, or without change streams at all, nothing is served from the cache.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MongoServerError } from 'mongodb';
import type { TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { MongoSource } from '../../plugins/mongodb/source.js';
import { field, makeDefinition } from '../sources/definitions.js';
import { fakeConnections, ON_STAND_IN, StandInServer } from './fake-server.js';
import { capturingLogger, mongoConfig } from './helpers.js';
import { startNodes } from './stand-in-app.js';

const streams = {
  films: { name: 'Films', config: { source: { type: 'database' }, cache: { enabled: true, ttl: 3600 } }, fields: { id: 'integer', title: 'string' } },
};

let nodes: TestApp[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.close();
});

function list(reply: { status: number; json: { data?: Array<{ title: string }> } }): string[] {
  if (reply.status !== 200) throw new Error(`list answered ${reply.status}: ${JSON.stringify(reply.json)}`);
  return reply.json.data!.map((e) => e.title);
}

const titles = async (node: TestApp): Promise<string[]> => list(await node.request('GET', '/api/streams/films/entries'));

describe(`query caches of database streams ${ON_STAND_IN}`, () => {
  it(`${ON_STAND_IN} another node's write drops this node's cached results`, async () => {
    const server = new StandInServer();
    nodes = await startNodes(server, 2, { streams });
    const [a, b] = nodes as [TestApp, TestApp];
    expect((await b.request('POST', '/api/streams/films/entries', { id: 1, title: 'one' })).status).toBe(201);
    await eventually(async () => expect(await titles(a)).toEqual(['one']));
    // Served from A's cache now: no query reaches the server.
    await titles(a);
    const finds = server.ops.get('find') ?? 0;
    await titles(a);
    expect(server.ops.get('find') ?? 0).toBe(finds);
    expect((await b.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' })).status).toBe(201);
    await eventually(async () => expect(await titles(a)).toEqual(['one', 'two']));
    expect((await b.request('PATCH', '/api/streams/films/entries/1', { title: 'uno' })).status).toBe(200);
    await eventually(async () => expect(await titles(a)).toEqual(['uno', 'two']));
  });

  it(`${ON_STAND_IN} while the change stream is down nothing is cached; once back, caching resumes`, async () => {
    const server = new StandInServer();
    nodes = await startNodes(server, 2, { streams });
    const [a, b] = nodes as [TestApp, TestApp];
    await b.request('POST', '/api/streams/films/entries', { id: 1, title: 'one' });
    await eventually(async () => expect(await titles(a)).toEqual(['one']));
    // The stream fails (a network error) and cannot re-open for a while.
    server.failNext('watch', () => new MongoServerError({ message: 'network (stand-in)', code: 6 }), 4);
    server.breakStreams(6, 'films');
    expect((await b.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' })).status).toBe(201);
    expect(await titles(a)).toEqual(['one', 'two']); // at once: no cache while not followed
    // Once the stream runs again (backoff 20 ms doubling), results are cached again.
    await eventually(async () => {
      await titles(a);
      const finds = server.ops.get('find') ?? 0;
      expect(await titles(a)).toEqual(['one', 'two']);
      expect(server.ops.get('find')).toBe(finds);
    });
    expect((await b.request('DELETE', '/api/streams/films/entries/2')).status).toBe(204);
    await eventually(async () => expect(await titles(a)).toEqual(['one']));
  });

  it(`${ON_STAND_IN} without change streams (a standalone server) the cache is disabled, and reads stay current`, async () => {
    const server = new StandInServer();
    server.failNext('watch', () => new MongoServerError({ message: 'The $changeStream stage is only supported on replica sets', code: 40573 }), 1000);
    nodes = await startNodes(server, 2, { streams });
    const [a, b] = nodes as [TestApp, TestApp];
    await b.request('POST', '/api/streams/films/entries', { id: 1, title: 'one' });
    expect(await titles(a)).toEqual(['one']);
    await b.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    expect(await titles(a)).toEqual(['one', 'two']);
  });

  it(`${ON_STAND_IN} the source says so in the log once, and never reports the store as followed`, async () => {
    const server = new StandInServer();
    server.failNext('watch', () => new MongoServerError({ message: 'The $changeStream stage is only supported on replica sets', code: 40573 }), 1000);
    const fake = fakeConnections(server);
    const { logger, lines } = capturingLogger();
    const config = mongoConfig({});
    const definition = makeDefinition('films', { source: { type: 'database' }, fields: [field('id', 'integer')] });
    const source = new MongoSource({ definition, config, root: config.root, logger }, fake.connections, { connectWaitMs: 100, retryInitialMs: 10, retryMaxMs: 30 });
    const events: string[] = [];
    source.watchStore((event) => events.push(event));
    await eventually(async () => expect(lines.filter((l) => /query cache disabled for this database stream/.test(String(l.msg)))).toHaveLength(1));
    await new Promise((r) => setTimeout(r, 100)); // several retries later: still one line
    expect(lines.filter((l) => /query cache disabled/.test(String(l.msg)))).toHaveLength(1);
    expect(events).not.toContain('reliable');
    await source.close();
  });
});
