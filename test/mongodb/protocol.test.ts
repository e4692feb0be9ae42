/**
 * Pieces of the issue #15 protocol below the two-kernel cases, on the stand-in replica set
 * (fake-server.ts): unique indexes from rules and refused array uniques, storage columns
 * kept out of filters and sorts, the definition store's watch (retried reloads, resume
 * from the token, back from polling to the change stream), readiness needing a primary.
 */
import { MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { MongoConnections } from '../../plugins/mongodb/index.js';
import { buildFilter, buildSort } from '../../plugins/mongodb/criteria.js';
import { hasWritableServer } from '../../plugins/mongodb/connections.js';
import { checkDatabaseSource } from '../../plugins/mongodb/definition-check.js';
import { MongoDefinitionStore } from '../../plugins/mongodb/definition-store.js';
import { MongoSource } from '../../plugins/mongodb/source.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import { eventually } from '../helpers/eventually.js';
import { field, makeDefinition } from '../sources/definitions.js';
import { silentLogger } from '../sources/harness.js';
import { fakeConnections, ON_STAND_IN, StandInServer } from './fake-server.js';
import { capturingLogger, mongoConfig } from './helpers.js';

function withRules(definition: StreamDefinition, rules: Record<string, string[]>): StreamDefinition {
  return { ...definition, rules };
}

describe(`unique indexes ${ON_STAND_IN}`, () => {
  it(`${ON_STAND_IN} come from unique: true and from unique rules about the stream's own field, not from rules about another stream`, async () => {
    const server = new StandInServer();
    const fake = fakeConnections(server);
    const email = { ...field('email'), rules: ['unique'] };
    const code = { ...field('code'), rules: ['unique:people,code'] };
    const ref = { ...field('ref'), rules: ['unique:other,ref'] };
    const nick = field('nick');
    const definition = withRules(
      makeDefinition('people', { source: { type: 'database' }, fields: [field('id', 'integer'), email, code, ref, nick, { ...field('slug'), unique: true }] }),
      { nick: ['required', 'unique'] },
    );
    const config = mongoConfig({});
    const source = new MongoSource({ definition, config, root: config.root, logger: silentLogger }, fake.connections, { connectWaitMs: 100 });
    await source.open();
    await source.indexing;
    expect(server.collections.get('people')!.uniqueIndexFields().sort()).toEqual(['code', 'email', 'nick', 'slug']);
    await source.put(1, { id: 1, email: 'a@x', nick: 'n1' }, { mode: 'create' });
    await expect(source.put(2, { id: 2, email: 'a@x', nick: 'n2' }, { mode: 'create' })).rejects.toMatchObject({ status: 409, errors: [{ meta: { field: 'email', rule: 'unique' } }] });
    expect(server.collections.get('people')!.docs).toHaveLength(1);
  });

  it('(no server) a unique field holding several values is refused when a database definition loads', () => {
    const connections = new MongoConnections(mongoConfig({ main: { url: 'mongodb://x' } }).mongodb, silentLogger, { env: {} });
    const tags = { ...field('tags', 'array'), unique: true };
    const picks = { ...field('picks', 'select', { multiple: true }), rules: ['unique'] };
    const one = { ...field('title'), unique: true };
    const definition = makeDefinition('films', { source: { type: 'database', connection: 'main' }, fields: [field('id', 'integer'), tags, picks, one] });
    const problems = checkDatabaseSource(definition, connections);
    expect(problems).toEqual([
      { path: '/fields/1', message: expect.stringMatching(/"tags" holds several values \(array\).*remove "unique"/) },
      { path: '/fields/2', message: expect.stringMatching(/"picks" holds several values \(select, multiple\)/) },
    ]);
  });
});

describe('storage columns are not attributes (no server: the translation)', () => {
  it('filters and sorts on _ko, _rev (and _id when it is not the key) are a 400; the key name maps to _id', () => {
    for (const name of ['_ko', '_rev', '_rev.x', '_id']) {
      expect(() => buildFilter([{ boolean: 'and', field: name, operator: '=', value: 1 }], 'id'), name).toThrow(expect.objectContaining({ status: 400 }));
      expect(() => buildSort([{ field: name, direction: 'asc' }], 'id'), name).toThrow(expect.objectContaining({ status: 400 }));
    }
    expect(buildFilter([{ boolean: 'and', field: '_id', operator: '=', value: 1 }], '_id')).toEqual({ _id: { $eq: 1 } });
  });
});

describe('readiness needs a primary (no server: the topology rule)', () => {
  it('secondaries alone are not writable; a primary, a standalone server or a mongos is', () => {
    const topology = (...types: string[]) => ({ servers: new Map(types.map((t, i) => [`h${i}:27017`, { type: t }])) });
    expect(hasWritableServer(topology('RSSecondary', 'RSSecondary', 'RSArbiter'))).toBe(false);
    expect(hasWritableServer(topology('Unknown'))).toBe(false);
    expect(hasWritableServer(topology('RSSecondary', 'RSPrimary'))).toBe(true);
    expect(hasWritableServer(topology('Standalone'))).toBe(true);
    expect(hasWritableServer(topology('Mongos'))).toBe(true);
  });
});

describe(`definition store: following the other nodes ${ON_STAND_IN}`, () => {
  function store(server: StandInServer, pollIntervalMs = 100_000) {
    const fake = fakeConnections(server);
    const { logger, lines } = capturingLogger();
    const instance = new MongoDefinitionStore(
      fake.connections.get('default'),
      { collection: 'core_streams', pollIntervalMs, connectWaitMs: 100, retryInitialMs: 10, retryMaxMs: 60 },
      logger,
    );
    return { store: instance, lines };
  }

  it(`${ON_STAND_IN} a reload that fails is retried with backoff until it succeeds`, async () => {
    const server = new StandInServer();
    const a = store(server).store;
    const b = store(server).store;
    await a.loadAll();
    await b.loadAll();
    const calls: string[] = [];
    let failures = 2;
    await b.watch(async (id) => {
      calls.push(id);
      if (failures-- > 0) throw new Error('database briefly unreachable');
      await b.load(id);
    });
    await eventually(async () => expect(b.mode).toBe('stream'));
    await a.save('films', { name: 'Films' });
    await eventually(async () => expect(calls).toEqual(['films', 'films', 'films']));
    await a.close();
    await b.close();
  });

  it(`${ON_STAND_IN} a change announced but never loaded is announced again by the next comparison (not mistaken for an echo)`, async () => {
    const server = new StandInServer();
    const a = store(server).store;
    const b = store(server).store;
    await a.loadAll();
    await b.loadAll();
    const calls: string[] = [];
    await b.watch((id) => void calls.push(id)); // never loads: the registry failed to build it
    await eventually(async () => expect(b.mode).toBe('stream'));
    await a.save('films', { name: 'Films' });
    await eventually(async () => expect(calls).toEqual(['films']));
    await b.poll();
    expect(calls).toEqual(['films', 'films']);
    await a.close();
    await b.close();
  });

  it(`${ON_STAND_IN} after a network error the stream resumes from its token: a change made in the gap arrives without polling`, async () => {
    const server = new StandInServer();
    const a = store(server).store;
    const b = store(server).store;
    await a.loadAll();
    await b.loadAll();
    const calls: string[] = [];
    await b.watch(async (id) => {
      calls.push(id);
      await b.load(id);
    });
    await eventually(async () => expect(b.mode).toBe('stream'));
    await a.save('one', { name: 'One' });
    await eventually(async () => expect(calls).toEqual(['one']));
    const comparisons = server.ops.get('find') ?? 0;
    server.failNext('watch', () => new MongoServerError({ message: 'network (stand-in)', code: 6 }), 1);
    server.breakStreams(6, 'core_streams');
    await a.save('two', { name: 'Two' }); // while B's stream is down
    await eventually(async () => expect(calls).toEqual(['one', 'two']));
    // Replayed from the token, not found by a full comparison (which reads every definition).
    expect(server.ops.get('find') ?? 0).toBe(comparisons);
    await a.close();
    await b.close();
  });

  it(`${ON_STAND_IN} without change streams it polls, then returns to the change stream when it works again`, async () => {
    const server = new StandInServer();
    server.failNext('watch', () => new MongoServerError({ message: 'The $changeStream stage is only supported on replica sets', code: 40573 }), 3);
    const a = store(server).store;
    const { store: b, lines } = store(server, 100);
    await a.loadAll();
    await b.loadAll();
    const calls: string[] = [];
    await b.watch(async (id) => {
      calls.push(id);
      await b.load(id);
    });
    await eventually(async () => expect(b.mode).toBe('polling'));
    expect(lines.some((l) => /polling instead/.test(String(l.msg)))).toBe(true);
    await a.save('polled', { name: 'Polled' });
    await eventually(async () => expect(calls).toEqual(['polled']));
    // The stand-in accepts change streams again after 3 refusals (retry every retry_max_ms).
    await eventually(async () => expect(b.mode).toBe('stream'));
    expect(lines.some((l) => /change stream available again/.test(String(l.msg)))).toBe(true);
    const polls = server.ops.get('find') ?? 0;
    await a.save('streamed', { name: 'Streamed' });
    await eventually(async () => expect(calls).toEqual(['polled', 'streamed']));
    await new Promise((r) => setTimeout(r, 250));
    expect(server.ops.get('find') ?? 0).toBe(polls); // no polling any more
    await a.close();
    await b.close();
  });

  it(`${ON_STAND_IN} a definition write is decided in the database: another node's create or change in between is a 409`, async () => {
    const server = new StandInServer();
    const a = store(server).store;
    const b = store(server).store;
    await a.loadAll();
    await b.loadAll();
    await a.save('films', { name: 'A' });
    await expect(b.save('films', { name: 'B' })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/created on another node/) });
    await b.loadAll(); // B now serves A's version
    await a.save('films', { name: 'A2' });
    await expect(b.save('films', { name: 'B2' })).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/changed or deleted on another node/) });
    expect(JSON.parse(server.collections.get('core_streams')!.docs[0]!.json as string).name).toBe('A2');
    await a.close();
    await b.close();
  });
});
