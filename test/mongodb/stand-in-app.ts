/**
 * Whole apps (real HTTP, real kernels) on the stand-in replica set: each node's mongodb
 * plugin gets its clients from the MONGODB_DRIVER factory, so N kernels share one
 * StandInServer the way N nodes share one replica set.
 */
import { definePlugin } from '../../kernel/index.js';
import { MONGODB_DRIVER } from '../../plugins/mongodb/index.js';
import type { MongoDriver } from '../../plugins/mongodb/connections.js';
import { startApp, type StartAppOptions, type TestApp } from '../helpers/app.js';
import type { StandInServer } from './fake-server.js';

export function standInPlugin(server: StandInServer) {
  return definePlugin({
    name: 'mongodb-stand-in',
    register({ provide }) {
      // The stand-in implements the part of MongoClient the plugin uses, not all of it.
      provide(MONGODB_DRIVER, server.driver() as unknown as MongoDriver);
    },
  });
}

/** The config of a node: short timeouts so "no primary" answers within a fraction of a second. */
export function nodeConfig(options: { definitionsInDatabase?: boolean; selectionTimeoutMs?: number } = {}): Record<string, unknown> {
  return {
    plugins: [{ name: 'mongodb', options: { connect_wait_ms: 500, retry_initial_ms: 20, retry_max_ms: 300 } }],
    mongodb: {
      connections: {
        default: { url: 'mongodb://standin.invalid:27017/?replicaSet=rs0', database: 'streams', options: { serverSelectionTimeoutMS: options.selectionTimeoutMs ?? 300 } },
      },
    },
    ...(options.definitionsInDatabase
      ? { streams: { source: { type: 'database', connection: 'default', table: 'core_streams' }, default_source: 'database', poll_interval_ms: 100 } }
      : {}),
  };
}

/** Start `count` nodes on one stand-in server. */
export async function startNodes(server: StandInServer, count: number, options: StartAppOptions & { definitionsInDatabase?: boolean } = {}): Promise<TestApp[]> {
  const nodes: TestApp[] = [];
  const { definitionsInDatabase, ...rest } = options;
  try {
    for (let i = 0; i < count; i++) {
      nodes.push(await startApp({ ...rest, config: { ...nodeConfig({ definitionsInDatabase }), ...(rest.config ?? {}) }, plugins: [standInPlugin(server), ...(rest.plugins ?? [])] }));
    }
  } catch (error) {
    for (const node of nodes) await node.close();
    throw error;
  }
  return nodes;
}
