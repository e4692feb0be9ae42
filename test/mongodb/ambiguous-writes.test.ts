/**
 * Ambiguous writes (issue #29 item 3): a definition write that the server applied but
 * answered with an error (a write concern timeout) must not leave the node on the old
 * definition. The real driver against the wire-level stand-in, two definition stores
 * (two nodes) on one replica set.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MongoConnections } from '../../plugins/mongodb/index.js';
import { MongoDefinitionStore } from '../../plugins/mongodb/definition-store.js';
import { eventually } from '../helpers/eventually.js';
import { silentLogger } from '../sources/harness.js';
import { ON_WIRE, WireServer } from '../wire/server.js';
import { mongoConfig } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function node(server: WireServer): Promise<{ store: MongoDefinitionStore; announced: string[] }> {
  const connections = new MongoConnections(mongoConfig({ default: { url: server.url(), database: 'streams', options: { serverSelectionTimeoutMS: 1000 } } }).mongodb, silentLogger);
  const store = new MongoDefinitionStore(connections.get('default'), { collection: 'core_streams', pollIntervalMs: 100, connectWaitMs: 2000, retryInitialMs: 20, retryMaxMs: 200 }, silentLogger);
  cleanups.push(async () => {
    await store.close();
    await connections.close();
  });
  await store.loadAll();
  const announced: string[] = [];
  await store.watch(async (id) => {
    announced.push(id);
    await store.load(id);
  });
  return { store, announced };
}

describe(`ambiguous definition writes ${ON_WIRE}`, () => {
  it(`${ON_WIRE} a definition update applied but answered with a write concern error: the node re-reads it, serves it, and its next write is not a 409`, async () => {
    const server = await new WireServer().start();
    cleanups.push(() => server.close());
    const a = await node(server);
    await a.store.save('films', { name: 'v1' });
    server.faults.afterApply('update', { kind: 'writeConcernError' }, { collection: 'core_streams' });
    await expect(a.store.save('films', { name: 'v2' })).rejects.toMatchObject({ status: 503 });
    expect(JSON.parse(server.stored('streams', 'core_streams')[0]!.json as string).name).toBe('v2'); // it was applied
    // The registry is told to reload what is stored (it serves v2, not v1 for good)...
    await eventually(async () => expect(a.announced).toContain('films'));
    // ...and the next write is decided over the stored version.
    await a.store.save('films', { name: 'v3' });
    expect(JSON.parse(server.stored('streams', 'core_streams')[0]!.json as string).name).toBe('v3');
  });

  it(`${ON_WIRE} a definition create whose reply is lost (applied, the connection dropped twice, the driver's retry too): the next write is not a 409`, async () => {
    const server = await new WireServer().start();
    cleanups.push(() => server.close());
    const a = await node(server);
    server.faults.afterApply('insert', { kind: 'drop' }, { collection: 'core_streams', times: 2 });
    await expect(a.store.save('films', { name: 'v1' })).rejects.toMatchObject({ status: 503 });
    expect(server.stored('streams', 'core_streams')).toHaveLength(1);
    await eventually(async () => expect(a.announced).toContain('films'));
    await a.store.save('films', { name: 'v2' });
    expect(JSON.parse(server.stored('streams', 'core_streams')[0]!.json as string).name).toBe('v2');
  });
});
