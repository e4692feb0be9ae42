/** Storage shape, key typing, injection guards on written documents, and driver error mapping. */
import { MongoNetworkError, MongoNetworkTimeoutError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { fromDocument, toDocument } from '../../plugins/mongodb/documents.js';
import { keyKindOf as keyKind, typedKey } from '../../plugins/streams/index.js';
import { mapMongoError } from '../../plugins/mongodb/errors.js';
import { parentsFirst } from '../../plugins/mongodb/definition-store.js';
import { checkDatabaseSource } from '../../plugins/mongodb/definition-check.js';
import { MongoConnections } from '../../plugins/mongodb/index.js';
import { field, makeDefinition } from '../sources/definitions.js';
import { capturingLogger, mongoConfig } from './helpers.js';

describe('mongodb documents, error mapping and definition checks (no server)', () => {
  it('stores the key as _id typed by the key field; 4 and "4" name the same entry', () => {
    const integer = makeDefinition('a', { fields: [field('id', 'integer')] });
    const text = makeDefinition('b', { fields: [field('slug', 'slug')], keyName: 'slug' });
    const undeclared = makeDefinition('c');
    expect(keyKind(integer)).toBe('number');
    expect(keyKind(text)).toBe('string');
    expect(keyKind(undeclared)).toBe('auto');
    expect(typedKey('4', 'number')).toBe(4);
    expect(typedKey(4, 'string')).toBe('4');
    expect(typedKey('4', 'auto')).toBe(4);
    expect(typedKey('007', 'auto')).toBe('007');
    expect(typedKey('a-uuid', 'auto')).toBe('a-uuid');
    expect(typedKey('abc', 'number')).toBe('abc');
    expect(typedKey('2.5', 'number')).toBe(2.5);
    expect(() => typedKey({ $gt: '' }, 'auto')).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => typedKey('', 'string')).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => typedKey(Number.NaN, 'number')).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('round-trips an entry; hidden fields never come back', () => {
    const entry = { id: 3, title: 'x', nested: { a: [1, { b: 2 }] }, empty: null };
    const document = toDocument(entry, 'id', 3);
    expect(document).toMatchObject({ _id: 3, title: 'x', nested: { a: [1, { b: 2 }] }, empty: null });
    expect(document).not.toHaveProperty('id');
    expect(fromDocument(document, 'id')).toEqual(entry);
    const hostile = JSON.parse('{"_id": 1, "__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const read = fromDocument(hostile, 'id');
    expect(read).toEqual({ id: 1, ok: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses operator-like, dotted and reserved attribute names at any depth (400, nothing written)', () => {
    const bad = [
      { id: 1, $set: { admin: true } },
      { id: 1, 'a.b': 1 },
      { id: 1, nested: { $where: 'x' } },
      { id: 1, list: [{ ok: 1 }, { $gt: 1 }] },
      JSON.parse('{"id": 1, "__proto__": {"x": 1}}') as Record<string, unknown>,
      { id: 1, _ko: 'x' },
      { id: 1, _id: 2 },
    ];
    for (const entry of bad) expect(() => toDocument(entry, 'id', 1), JSON.stringify(entry)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('maps a duplicate key to 409 naming the field, and an unreachable server to 503', () => {
    const duplicate = new MongoServerError({
      message: 'E11000 duplicate key error collection: streams.films index: unique_title dup key: { title: "x" }',
      code: 11000,
      keyValue: { title: 'x' },
    });
    const mapped = mapMongoError(duplicate, 'default', 'id') as { status: number; errors: unknown[] };
    expect(mapped.status).toBe(409);
    expect(mapped.errors).toEqual([{ message: 'The title has already been taken.', meta: { field: 'title', rule: 'unique' } }]);
    const onKey = mapMongoError(new MongoServerError({ message: 'E11000 index: _id_', code: 11000, keyValue: { _id: 1 } }), 'default', 'slug');
    expect(onKey).toMatchObject({ status: 409, errors: [{ meta: { field: 'slug' } }] });
    const unreachable = mapMongoError(new MongoServerSelectionError('down', {} as never), 'default', 'id');
    expect(unreachable).toMatchObject({ status: 503 });
    const other = new Error('boom');
    expect(mapMongoError(other, 'default', 'id')).toBe(other);
  });

  it('maps a query stopped at maxTimeMS (a request-built regex, a huge scan) to 503, not 500', () => {
    const expired = new MongoServerError({ message: 'operation exceeded time limit', code: 50 });
    expect(mapMongoError(expired, 'default', 'id')).toMatchObject({
      status: 503,
      errors: [{ message: 'The query took too long and was stopped; narrow its filters or retry later.' }],
      headers: [['Retry-After', '2']],
    });
  });

  it('answers every transient condition with 503 and Retry-After, never 500 (no primary, failover codes, network, timeouts)', () => {
    const cases: unknown[] = [
      new MongoServerSelectionError('no primary', {} as never),
      new MongoNetworkError('connection reset'),
      new MongoNetworkTimeoutError('socket timeout'),
      ...[91, 189, 11600, 11602, 10107, 13435, 13436, 6, 7, 89, 9001, 262, 64].map((code) => new MongoServerError({ message: `code ${code}`, code })),
      new MongoServerError({ message: 'labelled', code: 1234567, errorLabels: ['RetryableWriteError'] }),
      Object.assign(new Error('Timed out while checking out a connection from connection pool'), { name: 'MongoWaitQueueTimeoutError' }),
    ];
    for (const error of cases) {
      const mapped = mapMongoError(error, 'default', 'id') as { status: number; headers?: Array<[string, string]> };
      expect(mapped.status, String((error as Error).message)).toBe(503);
      expect(mapped.headers).toEqual([['Retry-After', '2']]);
    }
    // A real bug stays a bug (500, logged), not a retry.
    const bug = new MongoServerError({ message: 'bad', code: 2 });
    expect(mapMongoError(bug, 'default', 'id')).toBe(bug);
  });

  it('checks database definitions: connection, collection name, reserved fields', () => {
    const { logger } = capturingLogger();
    const connections = new MongoConnections(mongoConfig({ main: { url: 'mongodb://x' } }).mongodb, logger, { env: {} });
    const ok = makeDefinition('films', { source: { type: 'database', connection: 'main' }, fields: [field('id', 'integer')] });
    expect(checkDatabaseSource(ok, connections)).toEqual([]);
    const bad = makeDefinition('films', {
      source: { type: 'database', connection: 'nope', table: 'system.users' },
      fields: [field('id', 'integer'), field('_ko')],
    });
    const problems = checkDatabaseSource(bad, connections);
    expect(problems.map((p) => p.path)).toEqual(['/config/source/table', '/config/source/connection', '/fields/1']);
    expect(problems[1]!.message).toMatch(/not configured/);
    const noUrl = makeDefinition('films', { source: { type: 'database' } });
    expect(checkDatabaseSource(noUrl, connections)[0]!.message).toMatch(/MONGODB_URL/);
    expect(checkDatabaseSource(makeDefinition('x', { source: { type: 'filebase' } }), connections)).toEqual([]);
  });

  it('announces changed definitions parents first', () => {
    const changed = new Map<string, string | undefined>([
      ['child', 'parent'],
      ['grandchild', 'child'],
      ['parent', undefined],
      ['alone', 'not-changed'],
    ]);
    const order = parentsFirst(changed);
    expect(order.indexOf('parent')).toBeLessThan(order.indexOf('child'));
    expect(order.indexOf('child')).toBeLessThan(order.indexOf('grandchild'));
    expect(order).toHaveLength(4);
    // A cycle never loops forever.
    expect(parentsFirst(new Map([['a', 'b'], ['b', 'a']])).sort()).toEqual(['a', 'b']);
  });
});
