/**
 * Issue #19 item 1 for `database` streams: entries changed by another node sharing the
 * collection come from a MongoDB change stream as external changes (origin `remote`), and
 * a node's own writes are not announced a second time. Over the stand-in server
 * (fake-server.ts), whose change streams deliver every write later, in order.
 */
import { describe, expect, it } from 'vitest';
import { MongoSource } from '../../plugins/mongodb/source.js';
import type { ExternalChange } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import { field, makeDefinition } from '../sources/definitions.js';
import { silentLogger } from '../sources/harness.js';
import { fakeConnections, ON_STAND_IN } from './fake-server.js';
import { mongoConfig, waitFor } from './helpers.js';

function films(): StreamDefinition {
  return makeDefinition('films', { source: { type: 'database' }, fields: [field('id', 'integer'), field('title'), { ...field('secret'), protected: true }] });
}

/** One node's source of `films`, recording what it hears from other nodes. */
async function node(fake: ReturnType<typeof fakeConnections>): Promise<{ source: MongoSource; heard: ExternalChange[] }> {
  const config = mongoConfig({});
  const source = new MongoSource({ definition: films(), config, root: config.root, logger: silentLogger }, fake.connections, { connectWaitMs: 100 });
  const heard: ExternalChange[] = [];
  source.onExternalChange((changes) => heard.push(...changes));
  await source.open();
  await new Promise((r) => setTimeout(r, 10)); // the change stream opens once connected
  return { source, heard };
}

describe(`${ON_STAND_IN} database streams: changes made by other nodes (change streams)`, () => {
  it('announces another node\'s create, update and delete, and never a node\'s own write', async () => {
    const fake = fakeConnections();
    const a = await node(fake);
    const b = await node(fake);
    await a.source.put(1, { id: 1, title: 'Alien', secret: 's' });
    await a.source.put(1, { id: 1, title: 'Aliens', secret: 's' });
    await a.source.delete(1);
    await waitFor(() => b.heard.length === 3);
    expect(b.heard[0]).toEqual({ key: 1, entry: { id: 1, title: 'Alien', secret: 's' }, previous: undefined, origin: 'remote' });
    // Without pre-images the version before is known by its key only.
    expect(b.heard[1]).toEqual({ key: 1, entry: { id: 1, title: 'Aliens', secret: 's' }, previous: { id: 1 }, origin: 'remote' });
    expect(b.heard[2]).toEqual({ key: 1, entry: undefined, previous: { id: 1 }, origin: 'remote' });
    await b.source.put(2, { id: 2, title: 'from b' });
    await waitFor(() => a.heard.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.heard).toEqual([{ key: 2, entry: { id: 2, title: 'from b' }, previous: undefined, origin: 'remote' }]);
    expect(b.heard).toHaveLength(3);
    // A delete of nothing sends no event: it is not remembered as an own write either.
    expect(await a.source.delete(99)).toBe(false);
    await b.source.delete(2);
    await waitFor(() => a.heard.length === 2);
    expect(a.heard[1]).toMatchObject({ key: 2, entry: undefined, origin: 'remote' });
    await a.source.close();
    await b.source.close();
  });

  it('two quick PATCHes of one entry are this node\'s own writes, although the first event already shows the second\'s document', async () => {
    const fake = fakeConnections();
    const a = await node(fake);
    const b = await node(fake);
    await a.source.put(1, { id: 1, title: 'Alien', year: 1979 }, { mode: 'create' });
    const first = (await a.source.get(1))!;
    const patched = (await a.source.put(1, { ...first, title: 'Aliens' }, { mode: 'patch', previous: first })) as Record<string, unknown>;
    // Sent before the first update's event is delivered: that event's looked-up document is the second's.
    await a.source.put(1, { ...patched, year: 1986 }, { mode: 'patch', previous: patched });
    await waitFor(() => b.heard.length === 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(a.heard).toEqual([]);
    expect(b.heard.at(-1)).toMatchObject({ key: 1, entry: { id: 1, title: 'Aliens', year: 1986 }, origin: 'remote' });
    await a.source.close();
    await b.source.close();
  });

  it('ignores documents another tool wrote with a key no entry can have (an ObjectId)', async () => {
    const fake = fakeConnections();
    const a = await node(fake);
    const b = await node(fake);
    const { ObjectId } = await import('mongodb');
    await fake.server.client().db().collection('films').insertOne({ _id: new ObjectId(), title: 'foreign' });
    await b.source.put(3, { id: 3, title: 'three' });
    await waitFor(() => a.heard.length === 1);
    expect(a.heard.map((c) => c.key)).toEqual([3]);
    await a.source.close();
    await b.source.close();
  });
});
