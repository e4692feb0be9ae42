import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #20 item 1: spec conformance of the entry endpoints (each case failed before). */

const streams = {
  authors: { fields: { id: 'integer', name: 'string' } },
  books: {
    fields: [
      { handle: 'id', type: 'integer', config: { default: 'increment' } },
      { handle: 'title', type: 'string', required: true },
      { handle: 'author', type: 'relationship', config: { related: 'authors' } },
      { handle: 'password', type: 'hash' },
      { handle: 'secret', type: 'string', protected: true },
    ],
  },
};
const data = { authors: [{ id: 1, name: 'Ursula' }], books: [{ id: 1, title: 'Earthsea', author: 1 }] };

describe('entry endpoints (spec conformance)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ streams, data });
  });
  afterAll(() => app.close());

  it('a non-numeric value for an integer key is a validation failure (409) naming the field', async () => {
    const res = await app.request('POST', '/api/streams/books/entries', { id: 'abc', title: 'x' });
    expect(res.status).toBe(409);
    expect(res.json.errors).toEqual([{ message: 'The id field must be an integer.', meta: { field: 'id', rule: 'integer' } }]);
    const put = await app.request('PUT', '/api/streams/books/entries/abc', { title: 'x' });
    expect(put.status).toBe(409);
    expect(put.json.errors[0].meta).toEqual({ field: 'id', rule: 'integer' });
  });

  it('with= works on a single-entry GET, and an unknown relation is a 400 there and on an empty list', async () => {
    const res = await app.request('GET', '/api/streams/books/entries/1?with=author');
    expect(res.status).toBe(200);
    expect(res.json.data.author).toEqual({ id: 1, name: 'Ursula' });
    const plain = await app.request('GET', '/api/streams/books/entries/1');
    expect(plain.json.data.author).toBe(1);
    expect((await app.request('GET', '/api/streams/books/entries/1?with=nope')).status).toBe(400);
    expect((await app.request('GET', '/api/streams/books/entries?where[title]=none&with=nope')).status).toBe(400);
  });

  it('error envelopes carry meta.stream, meta.parameters and the stream links', async () => {
    const res = await app.request('GET', '/api/streams/books/entries/99');
    expect(res.status).toBe(404);
    expect(res.json.meta).toEqual({ parameters: { stream: 'books', entry: '99' }, stream: 'books' });
    expect(Object.keys(res.json.links).sort()).toEqual(['entries', 'self', 'stream', 'streams']);
    expect(res.json.links.entries).toBe(`${app.url}/api/streams/books/entries`);
    expect(res.json.links.stream).toBe(`${app.url}/api/streams/books`);
    expect(res.json.data).toBeNull();
  });

  it('error envelopes of writes carry meta.payload with protected, hash and encrypted values masked', async () => {
    const res = await app.request('POST', '/api/streams/books/entries', { password: 'hunter2', secret: 'x', title: '' });
    expect(res.status).toBe(409);
    expect(res.json.meta.stream).toBe('books');
    expect(res.json.meta.parameters).toEqual({ stream: 'books' });
    expect(res.json.meta.payload).toEqual({ password: '********', secret: '********', title: '' });
    expect(res.text).not.toContain('hunter2');
    const patch = await app.request('PATCH', '/api/streams/books/entries/1', { password: 'hunter2', title: { a: 1 } });
    expect(patch.status).toBe(409);
    expect(patch.json.meta.payload).toEqual({ password: '********', title: { a: 1 } });
    expect(patch.json.meta.parameters).toEqual({ stream: 'books', entry: '1' });
  });

  it('success answers of writes never echo a secret either', async () => {
    const res = await app.request('POST', '/api/streams/books/entries', { title: 'New', password: 'hunter2' });
    expect(res.status).toBe(201);
    expect(res.json.meta.payload.password).toBe('********');
    expect(res.text).not.toContain('hunter2');
  });

  it('an unknown stream answers 404 with meta.stream and no link to a stream that does not exist', async () => {
    const res = await app.request('GET', '/api/streams/nope/entries');
    expect(res.status).toBe(404);
    expect(res.json.meta).toEqual({ parameters: { stream: 'nope' }, stream: 'nope' });
    expect(Object.keys(res.json.links).sort()).toEqual(['self', 'streams']);
  });

  it('GET /api/streams honours where[...]/constraint[...] and orderBy like the entry list', async () => {
    const one = await app.request('GET', '/api/streams?where[id]=books');
    expect(one.status).toBe(200);
    expect(one.json.data.map((d: { id: string }) => d.id)).toEqual(['books']);
    expect(one.json.meta.total).toBe(1);
    const like = await app.request('GET', '/api/streams?where[id]=AUTH%25&constraint[id]=LIKE');
    expect(like.json.data.map((d: { id: string }) => d.id)).toEqual(['authors']);
    const sorted = await app.request('GET', '/api/streams?orderBy[id]=desc');
    expect(sorted.json.data.map((d: { id: string }) => d.id)).toEqual(['books', 'authors']);
    expect((await app.request('GET', '/api/streams?where[id]=x&constraint[id]=BOGUS')).status).toBe(400);
  });
});

describe('links never point at routes the interface does not serve', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ streams, data, config: { api: { interfaces: [{ name: 'public', prefix: 'api', resources: ['entries'] }] } } });
  });
  afterAll(() => app.close());

  it('an entries-only interface links to entries, never to the definitions it does not serve', async () => {
    const ok = await app.request('GET', '/api/streams/books/entries/1');
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.json.links).sort()).toEqual(['author', 'entries', 'self']);
    const missing = await app.request('GET', '/api/streams/books/entries/99');
    expect(missing.status).toBe(404);
    expect(Object.keys(missing.json.links).sort()).toEqual(['entries', 'self']);
    expect((await app.request('GET', '/api/streams')).status).toBe(404);
  });
});

describe('a definitions-only interface', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ streams, data, config: { api: { interfaces: [{ name: 'admin', prefix: 'admin', resources: ['streams'] }] } } });
  });
  afterAll(() => app.close());

  it('never links to the entries it does not serve', async () => {
    const res = await app.request('GET', '/admin/streams/books');
    expect(res.status).toBe(200);
    expect(Object.keys(res.json.links).sort()).toEqual(['self', 'stream', 'streams']);
    expect((await app.request('GET', '/admin/streams/books/entries')).status).toBe(404);
  });
});
