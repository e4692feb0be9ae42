/** Connection management without a server: config errors, background retry, 503s, readiness. */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../kernel/index.js';
import { MongoClient } from 'mongodb';
import { MongoConnections } from '../../plugins/mongodb/index.js';
import { DEFAULT_CLIENT_OPTIONS, defaultsUnder } from '../../plugins/mongodb/connections.js';
import { MongoSource } from '../../plugins/mongodb/source.js';
import { contractDefinition } from '../sources/contract.js';
import { capturingLogger, FAST_OPTIONS, mongoConfig, UNREACHABLE_URL, waitFor } from './helpers.js';

describe('mongodb connections (no server: an unreachable URL, the real driver)', () => {
  const open: MongoConnections[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
  });

  it('takes the URL from the config, else from url_env, and applies durable defaults under the user options', () => {
    const { logger } = capturingLogger();
    const config = mongoConfig({
      main: { url: 'mongodb://db.example:27017', database: 'app', options: { maxPoolSize: 5 } },
      other: { url_env: 'OTHER_MONGO' },
    });
    const connections = new MongoConnections(config.mongodb, logger, { env: { OTHER_MONGO: 'mongodb+srv://cluster.example', MONGODB_URL: 'mongodb://fallback' } });
    const main = connections.settings('main');
    expect(main).toMatchObject({ url: 'mongodb://db.example:27017', database: 'app' });
    expect(main.options).toMatchObject({ maxPoolSize: 5, w: 'majority', journal: true, wtimeoutMS: 10_000, readConcernLevel: 'majority', serverSelectionTimeoutMS: 5000, waitQueueTimeoutMS: 5000 });
    expect(connections.settings('other')).toMatchObject({ url: 'mongodb+srv://cluster.example', database: 'streams' });
    // `default` exists without configuration: MONGODB_URL.
    expect(connections.settings('default').url).toBe('mongodb://fallback');
    expect(DEFAULT_CLIENT_OPTIONS).toMatchObject({ w: 'majority', journal: true, wtimeoutMS: 10_000 });
  });

  it('lets options written in the connection string win over the plugin defaults (the driver would let the defaults win)', () => {
    const { logger } = capturingLogger();
    const url = 'mongodb://db.example:27017/?w=1&wtimeout=250&serverSelectionTimeoutMS=900&readConcernLevel=local&waitQueueTimeoutMS=50';
    const connections = new MongoConnections(mongoConfig({ main: { url } }).mongodb, logger, { env: {} });
    const { options } = connections.settings('main');
    for (const name of ['w', 'wtimeoutMS', 'serverSelectionTimeoutMS', 'readConcernLevel', 'waitQueueTimeoutMS']) expect(options).not.toHaveProperty(name);
    // What the URL does not say keeps its default.
    expect(options).toMatchObject({ journal: true, retryWrites: true });
    // The driver then reads the URL's values (a real MongoClient parses both, no connection made).
    const client = new MongoClient(url, options);
    expect(client.options.writeConcern).toMatchObject({ w: 1, wtimeoutMS: 250, journal: true });
    expect(client.options.serverSelectionTimeoutMS).toBe(900);
    expect(client.options.waitQueueTimeoutMS).toBe(50);
    expect(client.options.readConcern).toMatchObject({ level: 'local' });
    // Without them in the URL, the defaults reach the driver.
    const plain = new MongoClient('mongodb://db.example:27017', new MongoConnections(mongoConfig({ p: { url: 'mongodb://db.example:27017' } }).mongodb, logger, { env: {} }).settings('p').options);
    expect(plain.options.writeConcern).toMatchObject({ w: 'majority', journal: true, wtimeoutMS: 10_000 });
    expect(plain.options.serverSelectionTimeoutMS).toBe(5000);
    expect(plain.options.readConcern).toMatchObject({ level: 'majority' });
    // A whole writeConcern object in the connection's options replaces the flat defaults.
    expect(defaultsUnder('mongodb://x', { writeConcern: { w: 2 } })).not.toHaveProperty('w');
  });

  it('refuses an unknown connection, a missing URL and a non-mongodb URL with a clear config error', () => {
    const { logger } = capturingLogger();
    const connections = new MongoConnections(mongoConfig({ bad: { url_env: 'BAD_URL' } }).mongodb, logger, { env: { BAD_URL: 'http://nope' } });
    expect(() => connections.settings('nope')).toThrow(ConfigError);
    expect(() => connections.settings('nope')).toThrow(/not configured/);
    expect(() => connections.settings('bad')).toThrow(/must start with mongodb/);
    const empty = new MongoConnections(mongoConfig({}).mongodb, logger, { env: {} });
    expect(() => empty.get('default')).toThrow(/set mongodb\.connections\.default\.url or the MONGODB_URL environment variable/);
    expect(() => empty.get('../x')).toThrow(/not a valid mongodb connection name/);
    expect(empty.names()).toEqual([]);
  });

  it('keeps retrying an unreachable server in the background with a logged backoff, and reports not ready', async () => {
    const { logger, lines } = capturingLogger();
    const connections = new MongoConnections(mongoConfig({ default: { url: UNREACHABLE_URL } }).mongodb, logger, {
      retry: { initialDelayMs: 20, maxDelayMs: 80 },
      clientOverrides: FAST_OPTIONS,
    });
    open.push(connections);
    const connection = connections.get();
    expect(connections.get('default')).toBe(connection); // one pooled client per connection
    expect(connections.ready()).toBe(false);
    await waitFor(() => lines.filter((l) => l.msg && String(l.msg).includes('unreachable')).length >= 3, 10_000);
    const failures = lines.filter((l) => String(l.msg).includes('unreachable'));
    expect(failures[0]).toMatchObject({ level: 50, connection: 'default', attempt: 1, retryInMs: 20 });
    expect(failures[1]).toMatchObject({ attempt: 2, retryInMs: 40 });
    expect(failures[2]).toMatchObject({ attempt: 3, retryInMs: 80 });
    await expect(connection.whenConnected(50)).rejects.toMatchObject({ status: 503 });
    expect(connection.isReady()).toBe(false);
    await connections.close();
    const count = lines.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(lines.length).toBe(count); // the retry loop stopped with close()
  });

  it('a database source answers 503 (not 500, not a hang) while its server is unreachable', async () => {
    const { logger } = capturingLogger();
    const config = mongoConfig({ default: { url: UNREACHABLE_URL } });
    const connections = new MongoConnections(config.mongodb, logger, { retry: { initialDelayMs: 50, maxDelayMs: 100 }, clientOverrides: FAST_OPTIONS });
    open.push(connections);
    const source = new MongoSource({ definition: contractDefinition({ type: 'database' }), config, root: config.root, logger }, connections, { connectWaitMs: 100 });
    const started = Date.now();
    await expect(source.get(1)).rejects.toMatchObject({ status: 503 });
    await expect(source.query({ where: [], orderBy: [] })).rejects.toMatchObject({ status: 503 });
    await expect(source.put(1, { id: 1 })).rejects.toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await source.healthy()).toBe(false);
    await source.close();
    await expect(source.get(1)).rejects.toMatchObject({ status: 503 });
  });
});
