/**
 * MongoSource behaviour beyond the shared contract (unique indexes, increment counters,
 * protected projections, injection on write) and the shared definition store between
 * two nodes, over the mingo stand-in for a server (see fake-server.ts).
 */
import { describe, expect, it } from 'vitest';
import { MongoDefinitionStore } from '../../plugins/mongodb/definition-store.js';
import { MongoSource } from '../../plugins/mongodb/source.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import { field, makeDefinition } from '../sources/definitions.js';
import { silentLogger } from '../sources/harness.js';
import { fakeConnections } from './fake-server.js';
import { capturingLogger, mongoConfig } from './helpers.js';

function films(): StreamDefinition {
  const title = { ...field('title'), unique: true };
  const secret = { ...field('secret'), protected: true };
  return makeDefinition('films', { source: { type: 'database' }, fields: [field('id', 'integer'), title, secret, field('year', 'integer')] });
}

async function sourceOn(fake: ReturnType<typeof fakeConnections>, definition = films()): Promise<MongoSource> {
  const config = mongoConfig({});
  const source = new MongoSource({ definition, config, root: config.root, logger: silentLogger }, fake.connections, { connectWaitMs: 100 });
  await source.open();
  await source.indexing; // built in the background
  return source;
}

describe('mongodb source (stand-in server)', () => {
  it('creates the indexes at open and answers a duplicate on a unique field with 409, never 500', async () => {
    const fake = fakeConnections();
    const source = await sourceOn(fake);
    await source.put(1, { id: 1, title: 'Alien' });
    await expect(source.put(2, { id: 2, title: 'Alien' })).rejects.toMatchObject({
      status: 409,
      errors: [{ message: 'The title has already been taken.', meta: { field: 'title', rule: 'unique' } }],
    });
    expect(await source.get(2)).toBeUndefined();
    // Entries without the value (missing or null) never collide.
    await source.put(3, { id: 3 });
    await source.put(4, { id: 4 });
    await source.put(5, { id: 5, title: null });
    await source.put(6, { id: 6, title: null });
    // Replacing an entry keeps its own value.
    await source.put(1, { id: 1, title: 'Alien', year: 1979 });
    expect(await source.count([])).toBe(5);
    // Opening again (another node, a restart) is idempotent.
    await sourceOn(fake);
  });

  it('a create-or-replace that lost the race for a new _id to another node replaces it (it was a 409), with the next revision', async () => {
    const fake = fakeConnections();
    const source = await sourceOn(fake);
    const { MongoServerError } = await import('mongodb');
    // The other node creates the entry between this write's read (nothing stored) and its insert.
    fake.server.failNext('insertOne', () => {
      fake.server.collection('films').insert({ _id: 7, title: 'from the other node', _rev: 1 });
      return new MongoServerError({ message: 'E11000 duplicate key error collection: standin.films index: _id_ dup key', code: 11000, keyValue: { _id: 7 } });
    });
    await source.put(7, { id: 7, title: 'from this node' });
    expect(await source.get(7)).toMatchObject({ id: 7, title: 'from this node' });
    expect(fake.server.collection('films').docs.find((d) => d._id === 7)).toMatchObject({ _rev: 2 });
    await source.close();
  });

  it('allocates increment keys atomically above every stored or explicit integer key, across instances', async () => {
    const fake = fakeConnections();
    const nodeA = await sourceOn(fake);
    await nodeA.put(5, { id: 5, title: 'five' });
    const nodeB = await sourceOn(fake);
    const keys = await Promise.all([...Array.from({ length: 10 }, () => nodeA.allocateIntegerKey()), ...Array.from({ length: 10 }, () => nodeB.allocateIntegerKey())]);
    expect(new Set(keys).size).toBe(20);
    expect(Math.min(...keys)).toBe(6);
    expect(Math.max(...keys)).toBe(25);
    await nodeB.put(100, { id: 100, title: 'explicit' });
    expect(await nodeA.allocateIntegerKey()).toBe(101);
    expect(await nodeA.maxIntegerKey()).toBe(100);
    // A truncate keeps the counter (it only rises): keys go on above every key handed out.
    await nodeA.truncate();
    expect(await nodeA.allocateIntegerKey()).toBe(102);
  });

  it('revisions are compared by value: a copy of a served entry still makes PUT and DELETE conditional, and _rev never goes back (issue #29)', async () => {
    const fake = fakeConnections();
    const nodeA = await sourceOn(fake);
    const nodeB = await sourceOn(fake);
    await nodeA.put(1, { id: 1, title: 'one' }, { mode: 'create' });
    const served = (await nodeA.get(1))!;
    const copy = { ...served }; // what a hook or a clone hands back: another object, same value
    await nodeB.put(1, { id: 1, title: 'changed on B' }, { mode: 'replace', previous: (await nodeB.get(1))! });
    await expect(nodeA.put(1, { id: 1, title: 'over a stale copy' }, { mode: 'replace', previous: copy })).rejects.toMatchObject({ status: 409 });
    await expect(nodeA.delete(1, { mode: 'delete', previous: copy })).rejects.toMatchObject({ status: 409 });
    const stored = fake.collections.get('films')!.docs.find((d) => d._id === 1)!;
    expect(stored).toMatchObject({ title: 'changed on B', _rev: 2 });
    // A copy of the current version is accepted, and the revision rises.
    await nodeA.put(1, { id: 1, title: 'from A' }, { mode: 'replace', previous: { ...(await nodeA.get(1))! } });
    expect(fake.collections.get('films')!.docs.find((d) => d._id === 1)).toMatchObject({ title: 'from A', _rev: 3 });
  });

  it('a truncate on another node never lets an allocated key meet an explicit one (issue #29)', async () => {
    const fake = fakeConnections();
    const nodeA = await sourceOn(fake);
    const nodeB = await sourceOn(fake);
    await nodeA.put(100, { id: 100, title: 'explicit' }, { mode: 'create' }); // A's counter floor is 100 now
    await nodeB.truncate();
    // Below the floor A remembers, so A does not raise the counter for it: the counter must
    // still be above it (a truncate that reset the counter made allocation hand out 3 next).
    await nodeA.put(3, { id: 3, title: 'explicit after truncate' }, { mode: 'create' });
    const allocated = [];
    for (let i = 0; i < 5; i++) allocated.push(await nodeA.allocateIntegerKey());
    expect(allocated).not.toContain(3);
    for (const key of allocated) await nodeA.put(key, { id: key, title: `allocated ${key}` }, { mode: 'create' });
  });

  it('never fetches protected fields for lists and eager loading, but keeps them for single reads', async () => {
    const source = await sourceOn(fakeConnections());
    await source.put(1, { id: 1, title: 'a', secret: 'hash' });
    expect(await source.get(1)).toEqual({ id: 1, title: 'a', secret: 'hash' });
    expect(await source.query({ where: [], orderBy: [] })).toEqual([{ id: 1, title: 'a' }]);
    expect(await source.getMany([1])).toEqual([{ id: 1, title: 'a' }]);
    // Filtering on a protected field still works on the server.
    expect(await source.count([{ boolean: 'and', field: 'secret', operator: '=', value: 'hash' }])).toBe(1);
  });

  it('refuses operator keys in a written entry (400) and writes nothing', async () => {
    const fake = fakeConnections();
    const source = await sourceOn(fake);
    await expect(source.put(1, { id: 1, title: { $gt: '' } })).rejects.toMatchObject({ status: 400 });
    await expect(source.put(1, { id: 1, 'a.b': 1 })).rejects.toMatchObject({ status: 400 });
    await expect(source.query({ where: [{ boolean: 'and', field: 'title', operator: '=', value: { $ne: null } }], orderBy: [] })).rejects.toMatchObject({ status: 400 });
    await expect(source.get({ $gt: 0 } as unknown as number)).rejects.toMatchObject({ status: 400 });
    expect(fake.collections.get('films')!.docs).toEqual([]);
  });
});

describe('mongodb definition store: two nodes share definitions (stand-in server, polling)', () => {
  function store(fake: ReturnType<typeof fakeConnections>, logger = silentLogger): MongoDefinitionStore {
    return new MongoDefinitionStore(fake.connections.get('default'), { collection: 'core_streams', pollIntervalMs: 100000, connectWaitMs: 100 }, logger);
  }

  it('stores definitions as JSON text (so $schema survives) and tells the other node about changes, not its own', async () => {
    const fake = fakeConnections();
    const { logger } = capturingLogger();
    const nodeA = store(fake, logger);
    const nodeB = store(fake, logger);
    expect(await nodeA.loadAll()).toEqual([]);
    expect(await nodeB.loadAll()).toEqual([]);
    const seenByA: string[] = [];
    const seenByB: string[] = [];
    await nodeA.watch((id) => void seenByA.push(id));
    await nodeB.watch((id) => void seenByB.push(id));
    await new Promise((r) => setTimeout(r, 20));

    await nodeA.save('films', { $schema: '../schema.json', id: 'films', name: 'Films' });
    await nodeA.save('kids', { id: 'kids', extends: 'films' });
    await nodeA.poll();
    await nodeB.poll();
    expect(seenByA).toEqual([]);
    expect(seenByB).toEqual(['films', 'kids']);
    expect(await nodeB.loadAll()).toEqual([
      { id: 'films', raw: { $schema: '../schema.json', id: 'films', name: 'Films' } },
      { id: 'kids', raw: { id: 'kids', extends: 'films' } },
    ]);

    expect(await nodeB.remove('kids')).toBe(true);
    expect(await nodeB.remove('kids')).toBe(false);
    await nodeB.poll();
    await nodeA.poll();
    expect(seenByB).toEqual(['films', 'kids']);
    expect(seenByA).toEqual(['kids']);
    await nodeA.close();
    await nodeB.close();
  });
});

describe('mongodb source readiness (stand-in server)', () => {
  it('opens a source that could not open at boot once its connection is back (readiness polls heal it)', async () => {
    const fake = fakeConnections();
    const connection = fake.connections.get('default') as unknown as { isReady: () => boolean; whenConnected: () => Promise<void> };
    let up = false;
    connection.isReady = () => up;
    connection.whenConnected = async () => {
      if (!up) throw Object.assign(new Error('down'), { status: 503 });
    };
    const config = mongoConfig({});
    const source = new MongoSource({ definition: films(), config, root: config.root, logger: silentLogger }, fake.connections, { connectWaitMs: 10 });
    await expect(source.open()).rejects.toMatchObject({ status: 503 });
    expect(await source.healthy()).toBe(false);
    up = true;
    expect(await source.healthy()).toBe(false); // starts opening
    await new Promise((r) => setTimeout(r, 20));
    expect(await source.healthy()).toBe(true);
    expect(fake.collections.get('films')).toBeDefined(); // indexes were created
  });
});
