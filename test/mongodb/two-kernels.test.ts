/**
 * Two kernels (two nodes, real HTTP) on one stand-in replica set (fake-server.ts): the
 * write and watch protocols of issue #15, every case asserting the stored state
 * (two-node-cases.ts). The same cases run on a real replica set in real-server.test.ts
 * when MONGODB_URL is set.
 */
import { afterEach } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { ON_STAND_IN, StandInServer } from './fake-server.js';
import { startNodes } from './stand-in-app.js';
import { twoNodeCases, type TwoNodeBackend } from './two-node-cases.js';

console.info('[mongodb] two-kernel protocol tests run on the stand-in replica set (no MongoDB server here); real-server.test.ts runs them on MONGODB_URL.');

const open: TestApp[] = [];
afterEach(async () => {
  for (const node of open.splice(0)) await node.close();
});

const backend: TwoNodeBackend = {
  label: ON_STAND_IN,
  faults: true,
  async start(count, options) {
    const server = new StandInServer();
    const nodes = await startNodes(server, count, options);
    open.push(...nodes);
    return {
      nodes,
      standIn: server,
      faults: { forgetHistory: () => server.forgetHistory(), breakStreams: (code, collection) => server.breakStreams(code, collection), setPrimary: (primary) => server.setPrimary(primary) },
      stored: async (collection) => server.collections.get(collection)?.docs ?? [],
      delay: (op, ms) => server.delay(op, ms),
      drop: async (collection) => server.drop(collection),
      uniqueIndexFields: async (collection) => server.collections.get(collection)?.uniqueIndexFields() ?? [],
    };
  },
};

twoNodeCases(() => backend);
