import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** The field types and rules through the real app: entries layer, API envelope, files on disk. */
describe('fields over HTTP', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp({
      streams: {
        authors: { fields: { id: 'integer', name: { type: 'string', required: true } } },
        books: {
          fields: {
            id: 'integer',
            title: { type: 'string', required: true, unique: true, rules: 'max:40' },
            year: 'integer',
            available: 'boolean',
            author_id: { type: 'relationship', config: { related: 'authors' } },
            password: { type: 'hash', protected: true },
          },
          rules: { year: 'between:1000,2100' },
        },
      },
      data: { authors: [{ id: 1, name: 'Frank Herbert' }] },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('creates with casts, hides protected fields and links the related entry', async () => {
    const created = await app.request('POST', '/api/streams/books/entries', { title: 'Dune', year: '1965', available: 'yes', author_id: '1', password: 'pw' });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ title: 'Dune', year: 1965, available: true, author_id: 1 });
    expect(created.json.data.password).toBeUndefined();
    const key = created.json.data.id;
    const shown = await app.request('GET', `/api/streams/books/entries/${key}`);
    expect(shown.status).toBe(200);
    expect(shown.json.data.password).toBeUndefined();
    expect(shown.json.links.author_id).toMatch(/\/api\/streams\/authors\/entries\/1$/);
  });

  it('answers 409 with one element per failed rule', async () => {
    const res = await app.request('POST', '/api/streams/books/entries', { title: 'Dune', year: 'abc', author_id: 99 });
    expect(res.status).toBe(409);
    expect(res.json.data).toBeNull();
    expect(res.json.errors).toEqual([
      { message: 'The title has already been taken.', meta: { field: 'title', rule: 'unique' } },
      { message: 'The year field must be an integer.', meta: { field: 'year', rule: 'integer' } },
      { message: 'The selected author id is invalid.', meta: { field: 'author_id', rule: 'exists' } },
    ]);
    const taken = await app.request('POST', '/api/streams/books/entries', { title: 'Dune', year: 1999, author_id: 99 });
    expect(taken.status).toBe(409);
    expect(taken.json.errors).toEqual([
      { message: 'The title has already been taken.', meta: { field: 'title', rule: 'unique' } },
      { message: 'The selected author id is invalid.', meta: { field: 'author_id', rule: 'exists' } },
    ]);
    // A relationship to a stream that is not defined says why nothing can match.
    expect((await app.request('POST', '/api/streams', { id: 'readers', fields: { id: 'integer' } })).status).toBe(201);
    const orphan = await app.request('POST', '/api/streams', { id: 'loans', fields: { id: 'integer', reader: { type: 'relationship', config: { related: 'readers' } } } });
    expect(orphan.status).toBe(201);
    expect((await app.request('DELETE', '/api/streams/readers?force=true')).status).toBe(204);
    const loan = await app.request('POST', '/api/streams/loans/entries', { reader: 1 });
    expect(loan.status).toBe(409);
    expect(loan.json.errors).toEqual([{ message: 'The selected reader is invalid: its related stream [readers] does not exist.', meta: { field: 'reader', rule: 'exists' } }]);
    const range = await app.request('POST', '/api/streams/books/entries', { title: 'Old', year: 12 });
    expect(range.json.errors).toEqual([{ message: 'The year field must be between 1000 and 2100.', meta: { field: 'year', rule: 'between' } }]);
  });

  it('lets an entry keep its own unique value on PATCH and filters by typed values', async () => {
    const created = await app.request('POST', '/api/streams/books/entries', { title: 'Emma', year: 1815 });
    const key = created.json.data.id;
    const patched = await app.request('PATCH', `/api/streams/books/entries/${key}`, { title: 'Emma', available: 'off' });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({ title: 'Emma', available: false, year: 1815 });
    const list = await app.request('GET', '/api/streams/books/entries?where[year]=1815');
    expect(list.status).toBe(200);
    expect(list.json.data.map((b: { title: string }) => b.title)).toEqual(['Emma']);
    const bad = await app.request('GET', '/api/streams/books/entries?where[year]=abc');
    expect(bad.status).toBe(400);
  });
});
