/**
 * Against a real MongoDB server only (MONGODB_URL): two nodes of one app share
 * definitions and entries, a duplicate on a unique field is a 409, increment keys do not
 * collide. Skipped with a printed reason when there is no server.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { cleanups, listen, runCleanups } from '../realtime/clients.js';

const url = process.env.MONGODB_URL;
if (!url) console.info('[mongodb] two-node server tests skipped: MONGODB_URL is not set (no MongoDB server on this machine).');

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('mongodb: two nodes on one server [real server]', () => {
  it.skipIf(!url)('share definitions and entries; unique is 409; increment keys never collide', async () => {
    const database = `streams_nodes_${randomBytes(4).toString('hex')}`;
    const config = {
      plugins: [{ name: 'mongodb', options: { connect_wait_ms: 5000 } }],
      mongodb: { connections: { default: { url, database } } },
      streams: { source: { type: 'database', table: 'core_streams' }, default_source: 'database', poll_interval_ms: 200 },
    };
    const nodes: TestApp[] = [];
    try {
      nodes.push(await startApp({ config }), await startApp({ config }));
      const [a, b] = nodes as [TestApp, TestApp];
      await waitUntil(async () => (await a.request('GET', '/readyz')).status === 200);
      const created = await a.request('POST', '/api/streams', {
        id: 'films',
        fields: { id: { type: 'integer', config: { default: 'increment' } }, title: { type: 'string', unique: true } },
      });
      expect(created.status).toBe(201);
      await waitUntil(async () => (await b.request('GET', '/api/streams/films')).status === 200);
      const posted = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).request('POST', '/api/streams/films/entries', { title: `t${i}` })),
      );
      expect(posted.map((r) => r.status)).toEqual(Array(10).fill(201));
      expect(new Set(posted.map((r) => r.json.data.id)).size).toBe(10);
      const duplicate = await b.request('POST', '/api/streams/films/entries', { title: 't0' });
      expect(duplicate.status).toBe(409);
      const list = await a.request('GET', '/api/streams/films/entries?where[title]=t%25&constraint[title]=LIKE');
      expect(list.json.meta.total).toBe(10);
    } finally {
      for (const node of nodes) await node.close();
      const client = new MongoClient(url!);
      await client.db(database).dropDatabase().catch(() => undefined);
      await client.close();
    }
  });

  afterEach(runCleanups);

  it.skipIf(!url)('a write through one node reaches the other node\'s Server-Sent Events subscribers (change streams)', async (context) => {
    const client = new MongoClient(url!);
    const hello = (await client.db('admin').command({ hello: 1 })) as { setName?: string; msg?: string };
    await client.close();
    if (hello.setName === undefined && hello.msg !== 'isdbgrid') {
      console.info('[mongodb] change-stream test skipped: MONGODB_URL is a standalone server (change streams need a replica set)');
      context.skip();
    }
    const database = `streams_feed_${randomBytes(4).toString('hex')}`;
    const config = { plugins: [{ name: 'mongodb', options: { connect_wait_ms: 5000 } }], mongodb: { connections: { default: { url, database } } } };
    const streams = { films: { config: { source: { type: 'database' } }, fields: { id: 'integer', title: 'string' } } };
    try {
      const [a, b] = [await startApp({ streams, config }), await startApp({ streams, config })];
      cleanups.push(() => a.close(), () => b.close());
      for (const node of [a, b]) await waitUntil(async () => (await node.request('GET', '/api/streams/films/entries')).status === 200);
      await new Promise((r) => setTimeout(r, 500)); // both change streams open
      const onA = listen(`${a.url}/api/streams/films/changes`);
      const onB = listen(`${b.url}/api/streams/films/changes`);
      await Promise.all([onA.opened, onB.opened]);
      expect((await a.request('POST', '/api/streams/films/entries', { id: 1, title: 'Alien' })).status).toBe(201);
      await waitUntil(async () => onB.events.length === 1 && onA.events.length === 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(onB.events.map((e) => `${e.event} ${String(e.data.id)}`)).toEqual(['created 1']);
      expect(onA.events).toHaveLength(1);
    } finally {
      await runCleanups();
      const admin = new MongoClient(url!);
      await admin.db(database).dropDatabase().catch(() => undefined);
      await admin.close();
    }
  });
});
