import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WRITE_METHODS } from '../../plugins/entries/index.js';
import { ReadMethods } from '../../plugins/entries/criteria-builder.js';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Issue #16 item 1: one vocabulary. The list parameters, the query endpoint and the
 * stream list all check field names and operators through the criteria module of
 * plugins/sources, and one list of write methods guards the query endpoint.
 */
describe('one query vocabulary', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams: { books: { name: 'Books', fields: { id: 'integer', title: 'string', year: 'integer' } } },
      data: { books: [{ id: 1, title: 'Dune', year: 1965 }, { id: 2, title: 'Emma', year: 1815 }] },
    });
  });
  afterAll(() => app.close());

  it('refuses prototype segments in a list parameter, naming the parameter (the list check let them through to the engine)', async () => {
    for (const query of ['where[a.constructor]=1', 'where[a.__proto__]=1', 'orderBy[a.prototype]=asc', 'with=constructor']) {
      const res = await app.request('GET', `/api/streams/books/entries?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.errors[0].message, query).toMatch(/Invalid field name/);
      expect(res.json.errors[0].meta?.parameter, query).toBeDefined();
    }
  });

  it('names the parameter of an unknown operator and lists the known spellings', async () => {
    const res = await app.request('GET', '/api/streams/books/entries?where[year]=1&constraint[year]=~');
    expect(res.status).toBe(400);
    expect(res.json.errors[0].message).toContain('constraint[year]');
    expect(res.json.errors[0].message).toContain('NOT BETWEEN');
  });

  it('the same operators and casts answer on the list, the query endpoint and the stream list', async () => {
    const list = await app.request('GET', '/api/streams/books/entries?where[year]=1900&constraint[year]=%3E');
    const query = await app.request('POST', '/api/streams/books/query', { parameters: [{ where: ['year', '>', 1900] }] });
    expect(list.json.data.map((e: { id: number }) => e.id)).toEqual([1]);
    expect(query.json.data.map((e: { id: number }) => e.id)).toEqual([1]);
    const streams = await app.request('GET', '/api/streams?where[id]=books');
    expect(streams.status).toBe(200);
    expect(streams.json.data.map((s: { id: string }) => s.id)).toEqual(['books']);
  });

  it('one list of write methods: every one is refused by the query endpoint and cannot be registered as a read method', async () => {
    for (const method of WRITE_METHODS) {
      const res = await app.request('POST', '/api/streams/books/query', { parameters: [{ [method]: [] }] });
      expect(res.status, method).toBe(400);
      expect(() => new ReadMethods().register(method, (c) => c), method).toThrow(/cannot be registered/);
    }
    // The API's list had these two, the entries layer's did not: one could register `put`.
    expect(WRITE_METHODS.has('put') && WRITE_METHODS.has('remove')).toBe(true);
  });
});
