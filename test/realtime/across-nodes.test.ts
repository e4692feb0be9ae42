/**
 * Issue #29 item 6, realtime across nodes: three kernels serve one `database` stream from
 * the wire-level stand-in (the real `mongodb` driver against test/wire/server.ts), as behind
 * a load balancer without sticky sessions. A subscriber that moves from one node to another
 * with its last cursor misses nothing and gets nothing twice; a webhook receiver gets each
 * change under one delivery id across the cluster, also when the node sending it is killed
 * mid-delivery (its claim expires and another node sends it again, same id). With MONGODB_URL
 * (a replica set) those two cases run on it too, on a fresh database; the cases that need the
 * stand-in's switches (the oplog rolled over, round trips counted) run on the stand-in only.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterEach, describe, expect, it } from 'vitest';
import { MONGODB_CHANGES } from '../../plugins/mongodb/index.js';
import { REALTIME } from '../../plugins/realtime/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { ON_WIRE, WireServer } from '../wire/server.js';
import { cleanups, listen, runCleanups, socket, until, webhookReceiver } from './clients.js';
import { films } from './films-app.js';

afterEach(runCleanups);

const stream = { ...films, config: { source: { type: 'database' } } };

/** Where the nodes' database is: the wire stand-in (always), a real replica set (MONGODB_URL). */
interface Target {
  url: string;
  database: string;
  server?: WireServer;
}

const REAL = '[real server]';
const realUrl = process.env.MONGODB_URL;
const backends: Array<{ label: string; start(): Promise<Target> }> = [
  {
    label: ON_WIRE,
    async start() {
      const server = await new WireServer().start();
      cleanups.push(() => server.close());
      return { url: server.url(), database: 'streams', server };
    },
  },
  ...(realUrl
    ? [
        {
          label: REAL,
          async start(): Promise<Target> {
            const database = `streams_realtime_${randomBytes(4).toString('hex')}`;
            const client = new MongoClient(realUrl, { serverSelectionTimeoutMS: 5000 });
            cleanups.push(async () => {
              await client.db(database).dropDatabase().catch(() => undefined);
              await client.close();
            });
            return { url: realUrl, database };
          },
        },
      ]
    : []),
];
if (!realUrl) console.info('[realtime] across-nodes cases run on the wire stand-in only: MONGODB_URL is not set (no MongoDB server on this machine).');

/** One node of the cluster: the mongodb plugin on the target's database. */
function nodeConfig(target: Target, realtime: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { transport: 'node' },
    plugins: [{ name: 'mongodb', options: { connect_wait_ms: 2000, retry_initial_ms: 50, retry_max_ms: 300 } }],
    mongodb: { connections: { default: { url: target.url, database: target.database, options: { serverSelectionTimeoutMS: target.server ? 1000 : 5000 } } } },
    realtime,
  };
}

async function cluster(nodes: number, realtime: Record<string, unknown> = {}, backend = backends[0]!): Promise<{ server: WireServer; target: Target; apps: TestApp[] }> {
  const target = await backend.start();
  const apps: TestApp[] = [];
  for (let i = 0; i < nodes; i++) {
    const app = await startApp({ streams: { films: stream }, config: nodeConfig(target, realtime) });
    cleanups.push(() => app.close());
    apps.push(app);
  }
  // Every node follows the collection (its change stream is open), then a first write that each feed covers.
  for (const app of apps) await until(() => app.kernel.get(MONGODB_CHANGES).isFollowing('films'), 5000);
  const first = await apps[0]!.request('POST', '/api/streams/films/entries', { id: 1000, title: 'Warm-up', year: 2000 });
  expect(first.status).toBe(201);
  for (const app of apps) await until(() => app.kernel.get(REALTIME).feed.covers('films'), 5000);
  // `server`: the wire stand-in's switches, for the cases that run on it only.
  return { server: target.server!, target, apps };
}

describe.each(backends)('realtime across nodes (database streams) $label', ({ label }) => {
  const backend = backends.find((b) => b.label === label)!;
  it(`${label} a subscriber that moves from node A to node B with its last cursor misses nothing and gets nothing twice`, async () => {
    const { apps } = await cluster(3, {}, backend);
    const [a, b, c] = apps as [TestApp, TestApp, TestApp];
    const onA = listen(`${a.url}/api/streams/films/changes`);
    await onA.opened;
    // Writes through every node, as a load balancer spreads them.
    for (let i = 1; i <= 6; i++) expect((await apps[i % 3]!.request('POST', '/api/streams/films/entries', { id: i, title: `Film ${i}`, year: 1990 + i })).status).toBe(201);
    await until(() => onA.events.length === 6, 5000);
    onA.source.close();
    const last = onA.events[5]!.id;
    // While the client is away, more writes (through the node it left, too).
    expect((await a.request('PATCH', '/api/streams/films/entries/2', { title: 'Film 2 (cut)' })).status).toBe(200);
    expect((await c.request('DELETE', '/api/streams/films/entries/3')).status).toBe(204);
    // It reconnects to B with its last cursor.
    const onB = listen(`${b.url}/api/streams/films/changes?since=${last}`);
    await onB.opened;
    for (let i = 7; i <= 8; i++) expect((await apps[i % 3]!.request('POST', '/api/streams/films/entries', { id: i, title: `Film ${i}`, year: 1990 + i })).status).toBe(201);
    await until(() => onB.events.length === 4, 5000);
    await new Promise((r) => setTimeout(r, 200)); // nothing more comes (a duplicate would)
    const seen = [...onA.events, ...onB.events].map((e) => `${e.event} ${String(e.data.id)}`);
    expect(seen).toEqual(['created 1', 'created 2', 'created 3', 'created 4', 'created 5', 'created 6', 'updated 2', 'deleted 3', 'created 7', 'created 8']);
    // One cursor per change, the same on every node: B's JSON page from A's cursor shows the same ids.
    const page = await c.request('GET', `/api/streams/films/changes?since=${onA.events[2]!.id}`);
    expect(page.status).toBe(200);
    expect(page.json.data.map((ch: { cursor: string }) => ch.cursor)).toEqual([...onA.events.slice(3), ...onB.events].map((e) => e.id));
    // Cursors are cluster positions, not a node's counter.
    for (const e of [...onA.events, ...onB.events]) expect(e.id).toMatch(/^[0-9a-f]{20}$/);
    // A WebSocket client resuming on the third node from the same cursor gets the same changes.
    const { ws, messages } = await socket(`${c.url}/api/realtime`);
    ws.send(JSON.stringify({ type: 'subscribe', stream: 'films', since: onA.events[2]!.id }));
    const changes = (): Array<Record<string, unknown>> => messages.filter((m) => m.type !== 'subscribed');
    await until(() => changes().length === 7, 5000);
    expect(changes().map((m) => m.cursor)).toEqual([...onA.events.slice(3), ...onB.events].map((e) => e.id));
  });

  it(`${label} each change reaches a webhook receiver under one delivery id, once, while the node sending one is killed mid-delivery`, async () => {
    await webhookOnceAcrossNodes(backend);
  }, 60_000);
});

describe('realtime across nodes (database streams): the stand-in\'s switches', () => {

  it(`${ON_WIRE} a node that booted after the client's cursor replays from the database's history, then goes on live; past the oplog, 410`, async () => {
    const { server, target, apps } = await cluster(1);
    const a = apps[0]!;
    const onA = listen(`${a.url}/api/streams/films/changes`);
    await onA.opened;
    for (let i = 1; i <= 3; i++) expect((await a.request('POST', '/api/streams/films/entries', { id: i, title: `Film ${i}`, year: 1990 + i })).status).toBe(201);
    await until(() => onA.events.length === 3, 5000);
    onA.source.close();
    // Node B starts now: its own history begins after every change the client saw or missed.
    const b = await startApp({ streams: { films: stream }, config: nodeConfig(target) });
    cleanups.push(() => b.close());
    await until(() => b.kernel.get(MONGODB_CHANGES).isFollowing('films'), 5000);
    expect(b.kernel.get(REALTIME).feed.beforeCoverage('films', onA.events[0]!.id)).toBe(true);
    // A JSON page from the first cursor: read back from the database, same cursors as on A.
    const page = await b.request('GET', `/api/streams/films/changes?since=${onA.events[0]!.id}`);
    expect(page.status).toBe(200);
    expect(page.json.data.map((c: { cursor: string }) => c.cursor)).toEqual(onA.events.slice(1).map((e) => e.id));
    // An event stream from it: the two it missed, then a change written after (live on B), once each.
    const onB = listen(`${b.url}/api/streams/films/changes?since=${onA.events[0]!.id}`);
    await onB.opened;
    await until(() => onB.events.length === 2, 5000);
    expect((await a.request('DELETE', '/api/streams/films/entries/2')).status).toBe(204);
    await until(() => onB.events.length === 3, 5000);
    await new Promise((r) => setTimeout(r, 200)); // nothing more comes (a duplicate would)
    expect(onB.events.map((e) => `${e.event} ${String(e.data.id)}`)).toEqual(['created 2', 'created 3', 'deleted 2']);
    expect(onB.events.slice(0, 2).map((e) => e.id)).toEqual(onA.events.slice(1).map((e) => e.id));
    // Over a WebSocket the same: read back from the database, then live.
    const { ws, messages } = await socket(`${b.url}/api/realtime`);
    ws.send(JSON.stringify({ type: 'subscribe', stream: 'films', since: onA.events[0]!.id }));
    const changes = (): string[] => messages.filter((m) => m.type !== 'subscribed').map((m) => `${String(m.type)} ${String(m.id)}`);
    await until(() => changes().length === 3, 5000);
    expect((await a.request('POST', '/api/streams/films/entries', { id: 9, title: 'Film 9', year: 1999 })).status).toBe(201);
    await until(() => changes().length === 4, 5000);
    expect(changes()).toEqual(['created 2', 'created 3', 'deleted 2', 'created 9']);
    // Past what the database still holds (an oplog that rolled over): 410, the client reads the list again.
    server.history.forget();
    const gone = await b.request('GET', `/api/streams/films/changes?since=${onA.events[0]!.id}`);
    expect(gone.status).toBe(410);
    // The cursor to follow from is a cluster cursor this node serves.
    const oldest = gone.json.errors[0].meta.oldest as string;
    expect(oldest).toMatch(/^[0-9a-f]{20}$/);
    expect((await b.request('GET', `/api/streams/films/changes?since=${oldest}`)).status).toBe(200);
  });

  it(`${ON_WIRE} what the node's own history dropped (retention) is read back from the database, not a 410`, async () => {
    const { apps } = await cluster(1, { history: { count: 2 } });
    const a = apps[0]!;
    const first = (await a.request('GET', '/api/streams/films/changes')).json.meta.latest as string;
    for (let i = 1; i <= 4; i++) expect((await a.request('POST', '/api/streams/films/entries', { id: i, title: `Film ${i}`, year: 1990 + i })).status).toBe(201);
    // The node read all four; its history keeps the last two.
    await eventually(async () => expect((await a.request('GET', '/api/streams/films/changes')).json.data.map((c: { id: number }) => c.id)).toEqual([3, 4]));
    const page = await a.request('GET', `/api/streams/films/changes?since=${first}&per_page=10`);
    expect(page.status).toBe(200);
    expect(page.json.data.map((c: { id: number }) => c.id)).toEqual([1, 2, 3, 4]);
  });
});

/** A receiver that holds the first delivery it gets (never answers it; `hold` false: it does) and answers 200 to the rest. */
function holdingReceiver(hold = true): ReturnType<typeof webhookReceiver> {
  return webhookReceiver((n, res, one) => {
    if (hold && n === 1) return; // held: never answered (the connection closes at cleanup)
    one.answered = true;
    res.writeHead(200).end();
  });
}

describe('webhooks of a database stream across nodes', () => {
  it(`${ON_WIRE} a claim must outlast a whole post by a margin: a shorter lease is refused at boot, naming both settings`, async () => {
    const target = await backends[0]!.start();
    const realtime = { webhooks: [{ url: 'http://127.0.0.1:9/hook', streams: ['films'] }], webhook_timeout_ms: 2000, cluster: { lease_ms: 2500 } };
    await expect(startApp({ streams: { films: stream }, config: nodeConfig(target, realtime) })).rejects.toThrow(/realtime\.cluster\.lease_ms \(2500\) must be at least realtime\.webhook_timeout_ms \(2000\) \+ 1000/);
  });

  it(`${ON_WIRE} a node with no webhook for a database stream never reads the shared outbox`, async () => {
    const { server, apps } = await cluster(1, { cluster: { poll_ms: 50 } });
    const claims = (): number => server.ops.get('findAndModify') ?? 0;
    const before = claims();
    expect((await apps[0]!.request('POST', '/api/streams/films/entries', { id: 1, title: 'Alien', year: 1979 })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 300)); // several poll intervals: a poll would claim
    expect(claims()).toBe(before);
    expect(server.stored('streams', 'realtime_outbox')).toEqual([]);
  });

  it(`${ON_WIRE} a change made while no node followed the stream is delivered once a node follows again (from the outbox's mark)`, async () => {
    const hook = await holdingReceiver(false);
    const realtime = { webhooks: [{ url: hook.url, streams: ['films'] }], webhook_timeout_ms: 2000, cluster: { lease_ms: 4000, poll_ms: 50 } };
    const { server, target, apps } = await cluster(1, realtime);
    await until(() => hook.received.length === 1, 5000); // the warm-up
    await apps[0]!.close(); // the whole cluster is down...
    const writer = new MongoClient(server.url());
    cleanups.push(() => writer.close(true));
    // ...while another tool writes the collection.
    await writer.db('streams').collection<{ _id: number; title: string; year: number }>('films').insertOne({ _id: 2, title: 'Written while no node ran', year: 2001 });
    const b = await startApp({ streams: { films: stream }, config: nodeConfig(target, realtime) });
    cleanups.push(() => b.close());
    await until(() => b.kernel.get(MONGODB_CHANGES).isFollowing('films'), 5000);
    expect((await b.request('POST', '/api/streams/films/entries', { id: 3, title: 'After', year: 2002 })).status).toBe(201);
    await until(() => hook.received.length === 3, 5000);
    await new Promise((r) => setTimeout(r, 200)); // nothing more comes (a second delivery would)
    expect(hook.received.map((r) => (JSON.parse(r.body) as { id: number }).id).sort()).toEqual([1000, 2, 3].sort());
  });
});

/** A receiver that holds the first delivery, three nodes, the sender of the held one shut down. */
async function webhookOnceAcrossNodes(backend: (typeof backends)[number]): Promise<void> {
  const hook = await holdingReceiver();
  const { apps } = await cluster(3, { webhooks: [{ url: hook.url, streams: ['films'] }], webhook_timeout_ms: 2000, cluster: { lease_ms: 4000, poll_ms: 100 } }, backend);
  // The warm-up write's delivery is the first: held by the receiver, in flight on one node.
  await until(() => hook.received.length === 1, 5000);
  const victim = apps.findIndex((app) => app.kernel.get(REALTIME).outbox.sendingNow.size > 0);
  expect(victim).toBeGreaterThanOrEqual(0);
  const alive = apps.filter((_, i) => i !== victim);
  // More changes through the nodes that stay, then the sender dies with its delivery unanswered.
  for (let i = 1; i <= 4; i++) expect((await alive[i % 2]!.request('POST', '/api/streams/films/entries', { id: i, title: `Film ${i}`, year: 1990 + i })).status).toBe(201);
  await apps[victim]!.close();
  // Its claim expires (lease_ms), another node sends the held delivery again.
  // Generous: on a loaded 2-core machine the victim's drain, the lease and the polls take turns.
  await until(() => hook.received.filter((r) => r.answered).length === 5, 40_000);
  await new Promise((r) => setTimeout(r, 300)); // nothing more comes (a second delivery would)
  const answered = hook.received.filter((r) => r.answered);
  const ids = answered.map((r) => r.id);
  expect(new Set(ids).size).toBe(5); // each delivery id answered once across the cluster
  const changes = answered.map((r) => JSON.parse(r.body) as { event: string; id: number; cursor: string });
  expect(changes.map((c) => `${c.event} ${c.id}`).sort()).toEqual(['created 1', 'created 1000', 'created 2', 'created 3', 'created 4']);
  // The re-sent delivery is the held one: same id, so a receiver deduping by it sees the change once.
  expect(hook.received.filter((r) => r.id === hook.received[0]!.id)).toHaveLength(2);
  expect(hook.received).toHaveLength(6);
}
