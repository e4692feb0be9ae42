/**
 * The change follower (issue #29 item 1) run by the real `mongodb` driver against the
 * wire-level stand-in (test/wire/server.ts): every test here talks to that in-process server
 * over TCP, with the driver's own resume logic in the loop. A cut stream, a resumable getMore
 * error and a stream on a collection with no change yet all resume from the kept point with
 * no change lost; only a server-declared non-resumable error or an invalidate drops it.
 */
import { MongoClient, type Document } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFollower, type LostReason } from '../../plugins/mongodb/change-follower.js';
import { CollectionWatcher, type StoreEvent } from '../../plugins/mongodb/collection-watcher.js';
import { eventually } from '../helpers/eventually.js';
import { silentLogger } from '../sources/harness.js';
import { ON_WIRE, WireServer } from '../wire/server.js';

console.info(`[mongodb] follower tests run the real driver against the wire-level stand-in ${ON_WIRE} (no MongoDB server here).`);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serverAndClient(): Promise<{ server: WireServer; client: MongoClient; writer: MongoClient }> {
  const server = await new WireServer().start();
  const client = new MongoClient(server.url(), { serverSelectionTimeoutMS: 400, heartbeatFrequencyMS: 500 });
  const writer = new MongoClient(server.url(), { serverSelectionTimeoutMS: 2000 });
  await client.connect();
  await writer.connect();
  cleanups.push(async () => {
    await client.close(true);
    await writer.close(true);
    await server.close();
  });
  return { server, client, writer };
}

function watch(client: MongoClient): { ids: unknown[]; events: StoreEvent[]; watcher: CollectionWatcher } {
  const ids: unknown[] = [];
  const events: StoreEvent[] = [];
  const db = client.db('streams');
  const watcher = new CollectionWatcher(
    () => db.collection<Document>('films'),
    (event) => events.push(event),
    silentLogger,
    { initialMs: 200, maxMs: 1000 },
    (change) => ids.push((change as { documentKey?: { _id: unknown } }).documentKey?._id),
    () => db,
  );
  cleanups.push(() => watcher.stop());
  watcher.start();
  return { ids, events, watcher };
}

describe(`the change follower ${ON_WIRE}`, () => {
  it(`${ON_WIRE} a change stream cut by the network resumes from its token: the change made in the gap arrives, once`, async () => {
    const { server, client, writer } = await serverAndClient();
    const films = writer.db('streams').collection<{ _id: number }>('films');
    const { ids, events } = watch(client);
    await eventually(async () => expect(events).toContain('reliable'));
    await films.insertOne({ _id: 1 });
    await eventually(async () => expect(ids).toEqual([1]));
    expect(server.cutChangeStreams('films')).toBe(1);
    await films.insertOne({ _id: 2 }); // in the gap: the driver is resuming (it emits `close` meanwhile)
    await films.insertOne({ _id: 3 });
    await eventually(async () => expect(ids).toEqual([1, 2, 3]));
  });

  it(`${ON_WIRE} a getMore failing with a resumable code (11602, labelled) loses nothing`, async () => {
    const { server, client, writer } = await serverAndClient();
    const films = writer.db('streams').collection<{ _id: number }>('films');
    const { ids, events } = watch(client);
    await eventually(async () => expect(events).toContain('reliable'));
    server.faults.failGetMore(11602, { collection: 'films' });
    await films.insertOne({ _id: 1 });
    await films.insertOne({ _id: 2 });
    await eventually(async () => expect(ids).toEqual([1, 2]));
  });

  it(`${ON_WIRE} a collection with no change yet keeps its post-batch point: a change written while the stream cannot re-open arrives`, async () => {
    const { server, client, writer } = await serverAndClient();
    const films = writer.db('streams').collection<{ _id: number }>('films');
    const { ids, events, watcher } = watch(client);
    await eventually(async () => expect(events).toContain('reliable'));
    expect(watcher.resumePoint.token ?? watcher.resumePoint.startAtOperationTime).toBeDefined();
    // The driver's own resume fails too (its aggregate answers a network-ish error), so the
    // follower re-opens after its backoff: from the kept point, never from "now".
    server.faults.failCommand('aggregate', 6, { collection: 'films', times: 2 });
    server.cutChangeStreams('films');
    await films.insertOne({ _id: 1 });
    await eventually(async () => expect(events.filter((e) => e === 'unreliable').length).toBeGreaterThan(0));
    await eventually(async () => expect(ids).toEqual([1]));
  });

  it(`${ON_WIRE} only a non-resumable server error drops the point (and says so); an invalidate too`, async () => {
    const { server, client, writer } = await serverAndClient();
    const lost: LostReason[] = [];
    const opened: boolean[] = [];
    const db = client.db('streams');
    const follower = new ChangeFollower<Document>(
      () => db.collection('films'),
      () => db,
      { opened: (resumed) => opened.push(resumed), change: () => undefined, interrupted: () => undefined, lost: (reason) => lost.push(reason) },
      silentLogger,
      { retry: { initialMs: 50, maxMs: 200 } },
    );
    cleanups.push(() => follower.stop());
    follower.start();
    await eventually(async () => expect(opened).toEqual([false]));
    server.faults.failGetMore(280, { collection: 'films' });
    await eventually(async () => expect(lost).toEqual(['non-resumable']));
    await eventually(async () => expect(opened).toEqual([false, false])); // afresh: the owner reloads everything
    await writer.db('streams').collection<{ _id: number }>('films').insertOne({ _id: 1 });
    await writer.db('streams').collection('films').drop();
    await eventually(async () => expect(lost).toEqual(['non-resumable', 'invalidate']));
  });

  it(`${ON_WIRE} a primary that steps down and comes back: the writes after it arrive, the stream was reported down meanwhile`, async () => {
    const { server, client, writer } = await serverAndClient();
    const films = writer.db('streams').collection<{ _id: number }>('films');
    const { ids, events } = watch(client);
    await eventually(async () => expect(events).toContain('reliable'));
    await films.insertOne({ _id: 1 });
    await eventually(async () => expect(ids).toEqual([1]));
    server.stepDown();
    await eventually(async () => expect(events.at(-1)).toBe('unreliable'));
    server.stepUp();
    await films.insertOne({ _id: 2 });
    await eventually(async () => expect(ids).toEqual([1, 2]), 8000);
    await eventually(async () => expect(events.lastIndexOf('reliable')).toBeGreaterThan(events.lastIndexOf('unreliable')));
  });
});
