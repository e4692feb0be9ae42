/**
 * The shared source contract suite against MongoDB: a real server from MONGODB_URL, or
 * mongodb-memory-server when it is installed and can obtain a mongod binary. Without
 * either, the suite is skipped and says why.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MongoConnections } from '../../plugins/mongodb/index.js';
import { MongoSource } from '../../plugins/mongodb/source.js';
import { runSourceContract, type SourceHarness } from '../sources/contract.js';
import { silentLogger } from '../sources/harness.js';
import { fakeConnections } from './fake-server.js';
import { mongoConfig } from './helpers.js';

/** A server URL, or the reason there is none. */
async function findServer(): Promise<{ url: string; stop?: () => Promise<void> } | { reason: string }> {
  if (process.env.MONGODB_URL) return { url: process.env.MONGODB_URL };
  // Not a dependency: used only when someone installed it (and it can fetch a binary).
  const moduleName = 'mongodb-memory-server';
  let memory: { MongoMemoryServer: { create(): Promise<{ getUri(): string; stop(): Promise<boolean> }> } };
  try {
    memory = (await import(moduleName)) as typeof memory;
  } catch {
    return { reason: 'MONGODB_URL is not set and mongodb-memory-server is not installed' };
  }
  try {
    const server = await memory.MongoMemoryServer.create();
    return { url: server.getUri(), stop: async () => void (await server.stop()) };
  } catch (error) {
    return { reason: `MONGODB_URL is not set and mongodb-memory-server could not start a mongod (${(error as Error).message.split('\n')[0]})` };
  }
}

const server = await findServer();

if ('reason' in server) {
  describe('source contract: database (MongoDB)', () => {
    console.info(`[mongodb] source contract suite skipped: ${server.reason}. Set MONGODB_URL=mongodb://host:27017 to run it.`);
    it.skipIf(true)('runs the shared source contract against a MongoDB server', () => {
      expect(server.reason).toBeTruthy();
    });
  });
} else {
  /** One fresh database per harness, dropped by cleanup. */
  const harness = async (): Promise<SourceHarness> => {
    const database = `streams_contract_${randomBytes(4).toString('hex')}`;
    const config = mongoConfig({ default: { url: server.url, database, options: { serverSelectionTimeoutMS: 3000 } } });
    const connections = new MongoConnections(config.mongodb, silentLogger, { retry: { initialDelayMs: 100, maxDelayMs: 1000 } });
    const make = async (definition: Parameters<SourceHarness['create']>[0]): Promise<MongoSource> => {
      const source = new MongoSource({ definition, config, root: config.root, logger: silentLogger }, connections, { connectWaitMs: 5000 });
      await source.open();
      return source;
    };
    return {
      create: make,
      reopen: make,
      cleanup: async () => {
        await connections.get().db.dropDatabase().catch(() => undefined);
        await connections.close();
      },
    };
  };
  runSourceContract('database (MongoDB)', harness, { source: { type: 'database' } });
}

/**
 * The same suite over the MongoSource code with a mingo-backed stand-in for the server
 * (test/mongodb/fake-server.ts): it runs everywhere and exercises the source's own logic.
 */
runSourceContract(
  'database (MongoSource over the mingo stand-in, no server)',
  async () => {
    const { connections } = fakeConnections();
    const config = mongoConfig({});
    const make = async (definition: Parameters<SourceHarness['create']>[0]): Promise<MongoSource> => {
      const source = new MongoSource({ definition, config, root: config.root, logger: silentLogger }, connections, { connectWaitMs: 100 });
      await source.open();
      return source;
    };
    return { create: make, reopen: make, cleanup: async () => undefined };
  },
  { source: { type: 'database' } },
);
