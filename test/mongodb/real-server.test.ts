/**
 * The real-server suite (issue #15 item 9), run only with MONGODB_URL (a replica set:
 * see docs/mongodb.md "Running the real-server suite"): the two-node cases of
 * two-node-cases.ts against the server, and a differential run of the whole filter pool
 * (filter-pool.ts) in the server against the in-memory reference engine. The shared
 * source contract runs on the same URL in source-contract.test.ts. Each run uses fresh
 * databases, dropped afterwards. Without MONGODB_URL every test here is skipped and says why.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient, type Document } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildFilter } from '../../plugins/mongodb/criteria.js';
import { toDocument } from '../../plugins/mongodb/documents.js';
import { matchesWhere, type WhereClause } from '../../plugins/sources/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';
import { casesFor, clause, fixtures, KEY } from './filter-pool.js';
import { twoNodeCases, type TwoNodeBackend } from './two-node-cases.js';

const url = process.env.MONGODB_URL;
const REAL = '[real server]';
if (!url) {
  console.info('[mongodb] real-server suite skipped: MONGODB_URL is not set (no MongoDB server on this machine). See docs/mongodb.md "Running the real-server suite".');
} else {
  console.info('[mongodb] real-server suite on MONGODB_URL; fault-injection cases (an operation held or failed on demand, 286/280, no primary) run on the stand-in only and are skipped here.');
}

const client = url ? new MongoClient(url, { serverSelectionTimeoutMS: 5000 }) : undefined;
const databases: string[] = [];
const open: TestApp[] = [];

afterEach(async () => {
  for (const node of open.splice(0)) await node.close();
  for (const name of databases.splice(0)) await client!.db(name).dropDatabase().catch(() => undefined);
});
beforeAll(async () => {
  if (!client) return;
  try {
    await client.db('admin').command({ ping: 1 });
  } catch (error) {
    throw new Error(`MONGODB_URL is set but the server does not answer (${(error as Error).message}); start it (docs/mongodb.md) or unset MONGODB_URL`);
  }
});
afterAll(async () => {
  await client?.close();
});

function freshDatabase(prefix: string): string {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  databases.push(name);
  return name;
}

const backend: TwoNodeBackend = {
  label: REAL,
  async start(count, options) {
    const database = freshDatabase('streams_nodes');
    const { definitionsInDatabase, ...rest } = options;
    const config = {
      plugins: [{ name: 'mongodb', options: { connect_wait_ms: 5000, retry_initial_ms: 50, retry_max_ms: 1000 } }],
      mongodb: { connections: { default: { url, database, options: { serverSelectionTimeoutMS: 3000 } } } },
      ...(definitionsInDatabase ? { streams: { source: { type: 'database', connection: 'default', table: 'core_streams' }, default_source: 'database', poll_interval_ms: 200 } } : {}),
    };
    const nodes: TestApp[] = [];
    for (let i = 0; i < count; i++) {
      const node = await startApp({ ...rest, config });
      nodes.push(node);
      open.push(node);
    }
    const db = client!.db(database);
    return {
      nodes,
      stored: async (collection) => db.collection<Document>(collection).find({}).toArray(),
      delay: () => undefined,
      drop: async (collection) => void (await db.collection(collection).drop().catch(() => false)),
      uniqueIndexFields: async (collection) =>
        (await db.collection(collection).listIndexes().toArray()).filter((i) => i.unique === true).map((i) => Object.keys(i.key as Document)[0]!),
    };
  },
};

if (url) {
  twoNodeCases(() => backend);
}

describe(`failover ${REAL}`, () => {
  it.skipIf(!url)(`${REAL} the primary steps down: every request answers in time (200, or 503 with Retry-After, never 500) and writes work again`, async () => {
    const streams = { films: { config: { source: { type: 'database' } }, fields: { id: 'integer', title: 'string' } } };
    const env = await backend.start(2, { streams });
    const [a, b] = env.nodes as [TestApp, TestApp];
    expect((await a.request('POST', '/api/streams/films/entries', { id: 1, title: 'one' })).status).toBe(201);
    // A one-member set has no other member to elect: the step-down is refused and the case
    // degenerates to "nothing breaks" (the command's connection may also be dropped: expected).
    await client!.db('admin').command({ replSetStepDown: 10, secondaryCatchUpPeriodSecs: 5 }).catch(() => undefined);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const reply = await (i % 2 ? a : b).request('PATCH', '/api/streams/films/entries/1', { title: `t${i}` });
      statuses.push(reply.status);
      if (reply.status === 503) expect(reply.headers['retry-after']).toBe('2');
    }
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    await eventually(async () => expect((await a.request('PATCH', '/api/streams/films/entries/1', { title: 'after' })).status).toBe(200), 30_000);
    expect((await env.stored('films'))[0]).toMatchObject({ title: 'after' });
  }, 60_000);
});

describe(`filter pool ${REAL}: the server selects exactly what the in-memory engine selects`, () => {
  it.skipIf(!url)(`${REAL} every operator on every edge value, and combined clauses`, async () => {
    const db = client!.db(freshDatabase('streams_pool'));
    const entries = fixtures();
    await db.collection('pool').insertMany(entries.map((e) => toDocument(e, KEY, e.id as number)));
    const mismatches: string[] = [];
    const check = async (label: string, where: WhereClause[]): Promise<void> => {
      const expected = entries.filter((e) => matchesWhere(where, e)).map((e) => e.id as number).sort((a, b) => a - b);
      const got = (await db.collection('pool').find(buildFilter(where, KEY), { projection: { _id: 1 } }).toArray()).map((d) => d._id as unknown as number).sort((a, b) => a - b);
      if (JSON.stringify(expected) !== JSON.stringify(got)) mismatches.push(`${label}: reference ${JSON.stringify(expected)} server ${JSON.stringify(got)}`);
    };
    let count = 0;
    for (const field of ['v', 'n.x', 'n']) {
      for (const { label, where } of casesFor(field)) {
        await check(label, where);
        count++;
      }
    }
    await check('AND before OR', [clause('v', 'NOT NULL', null), clause('v', '>', 0), clause('v', 'LIKE', 'a%', 'or'), clause('id', '<', 10)]);
    console.info(`[mongodb] filter pool on the real server: ${count + 1} cases, ${mismatches.length} mismatches`);
    expect(count).toBeGreaterThan(450);
    expect(mismatches).toEqual([]);
  });
});
