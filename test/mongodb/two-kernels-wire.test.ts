/**
 * The two-node cases of two-node-cases.ts (issue #15's write and watch protocols) with the
 * real `mongodb` driver against the wire-level stand-in (test/wire/server.ts, issue #29
 * item 2): two kernels (real HTTP) on one "replica set", with the wire stand-in's faults (a
 * change stream failing with 286/280/6, the oplog rolled over, the primary stepping down). The
 * two cases that hold one operation at the server or count round trips need the driver-level
 * stand-in (fake-server.ts: two-kernels.test.ts), which can hold an operation before applying it.
 */
import type { Document } from 'mongodb';
import { afterEach } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { ON_WIRE, WireServer } from '../wire/server.js';
import { twoNodeCases, type TwoNodeBackend } from './two-node-cases.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const node of open.splice(0).reverse()) await node.close();
});

const DATABASE = 'streams';

const backend: TwoNodeBackend = {
  label: ON_WIRE,
  faults: true,
  async start(count, options) {
    const server = await new WireServer().start();
    open.push(server);
    const { definitionsInDatabase, ...rest } = options;
    const config = {
      plugins: [{ name: 'mongodb', options: { connect_wait_ms: 2000, retry_initial_ms: 20, retry_max_ms: 300 } }],
      mongodb: { connections: { default: { url: server.url(), database: DATABASE, options: { serverSelectionTimeoutMS: 1000 } } } },
      ...(definitionsInDatabase ? { streams: { source: { type: 'database', connection: 'default', table: 'core_streams' }, default_source: 'database', poll_interval_ms: 100 } } : {}),
    };
    const nodes: TestApp[] = [];
    for (let i = 0; i < count; i++) {
      const node = await startApp({ ...rest, config: { ...config, ...(rest.config ?? {}) } });
      nodes.push(node);
      open.push(node);
    }
    return {
      nodes,
      stored: async (collection) => server.stored(DATABASE, collection) as Document[],
      // The wire stand-in holds no operation before applying it (its faults act after: faults.ts).
      delay: () => undefined,
      faults: {
        forgetHistory: () => server.forgetHistory(),
        breakStreams: (code, collection) => server.faults.failGetMore(code, { collection }),
        setPrimary: (primary) => (primary ? server.stepUp() : server.stepDown()),
      },
      drop: async (collection) => void server.drop(DATABASE, collection),
      uniqueIndexFields: async (collection) => (server.collection(DATABASE, collection, false)?.indexes ?? []).filter((i) => i.unique && i.name !== '_id_').map((i) => Object.keys(i.key)[0]!),
    };
  },
};

twoNodeCases(() => backend);
