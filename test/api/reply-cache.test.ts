import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** GET bodies are reused between requests: they must never outlive a write, a definition change or a Host. */
const planets = { fields: { id: 'integer', name: 'string', moons: 'integer' } };
const data = { planets: [{ id: 1, name: 'Mercury', moons: 0 }, { id: 2, name: 'Venus', moons: 0 }] };

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('reused GET answers', () => {
  it('show: a PATCH, a PUT and a delete are seen at once, with a new ETag', async () => {
    app = await startApp({ streams: { planets }, data });
    const first = await app.request('GET', '/api/streams/planets/entries/1');
    const again = await app.request('GET', '/api/streams/planets/entries/1');
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);

    await app.request('PATCH', '/api/streams/planets/entries/1', { moons: 1 });
    const patched = await app.request('GET', '/api/streams/planets/entries/1');
    expect(patched.json.data.moons).toBe(1);
    expect(patched.headers.etag).not.toBe(first.headers.etag);
    expect((await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'if-none-match': first.headers.etag! })).status).toBe(200);
    expect((await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'if-none-match': patched.headers.etag! })).status).toBe(304);

    await app.request('PUT', '/api/streams/planets/entries/1', { name: 'Hermes' });
    expect((await app.request('GET', '/api/streams/planets/entries/1')).json.data).toEqual({ id: 1, name: 'Hermes' });
    await app.request('DELETE', '/api/streams/planets/entries/1');
    expect((await app.request('GET', '/api/streams/planets/entries/1')).status).toBe(404);
  });

  it('show: links follow the Host of each request', async () => {
    app = await startApp({ streams: { planets }, data });
    const a = await app.request('GET', '/api/streams/planets/entries/2', undefined, { host: 'a.example' });
    const b = await app.request('GET', '/api/streams/planets/entries/2', undefined, { host: 'b.example' });
    expect(a.json.links.self).toBe('http://a.example/api/streams/planets/entries/2');
    expect(b.json.links.self).toBe('http://b.example/api/streams/planets/entries/2');
  });

  it('list: creates and deletes change the page and its total; other query strings get their own page', async () => {
    app = await startApp({ streams: { planets }, data });
    const before = await app.request('GET', '/api/streams/planets/entries?per_page=10');
    expect(before.json.meta.total).toBe(2);
    await app.request('POST', '/api/streams/planets/entries', { id: 3, name: 'Earth', moons: 1 });
    const after = await app.request('GET', '/api/streams/planets/entries?per_page=10');
    expect(after.json.meta.total).toBe(3);
    expect(after.json.data.map((p: { name: string }) => p.name)).toEqual(['Mercury', 'Venus', 'Earth']);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const filtered = await app.request('GET', '/api/streams/planets/entries?per_page=10&where[moons]=0');
    expect(filtered.json.data.map((p: { name: string }) => p.name)).toEqual(['Mercury', 'Venus']);
    await app.request('DELETE', '/api/streams/planets/entries/2');
    expect((await app.request('GET', '/api/streams/planets/entries?per_page=10&where[moons]=0')).json.data.map((p: { name: string }) => p.name)).toEqual(['Mercury']);
  });

  it('a changed definition changes the answer (a new relationship link, a protected field)', async () => {
    app = await startApp({ streams: { planets }, data });
    await app.request('GET', '/api/streams/planets/entries/1');
    await app.request('PATCH', '/api/streams/planets', { fields: { id: 'integer', name: 'string', moons: { type: 'integer', protected: true } } });
    const shown = await app.request('GET', '/api/streams/planets/entries/1');
    expect(shown.json.data).toEqual({ id: 1, name: 'Mercury' });
  });
});
