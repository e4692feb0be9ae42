import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

const streams = {
  planets: {
    name: 'Planets',
    fields: {
      id: 'integer',
      name: { type: 'string', required: true },
      climate: 'string',
      population: 'integer',
      secret: { type: 'string', protected: true },
    },
  },
  people: {
    name: 'People',
    fields: {
      id: 'integer',
      name: { type: 'string', required: true },
      homeworld: { type: 'relationship', config: { related: 'planets' } },
    },
  },
};
const data = {
  planets: [
    { id: 1, name: 'Tatooine', climate: 'arid', population: 200000, secret: 'sand' },
    { id: 2, name: 'Alderaan', climate: 'temperate', population: 2000000000 },
    { id: 3, name: 'Yavin IV', climate: 'temperate', population: 1000 },
    { id: 4, name: 'Hoth', climate: 'frozen', population: 0 },
    { id: 5, name: 'Dagobah', climate: 'murky', population: 0 },
  ],
  people: [{ id: 1, name: 'Luke Skywalker', homeworld: 1 }],
};

describe('entry endpoints over HTTP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ streams, data });
  });
  afterAll(async () => app?.close());

  describe('GET one entry', () => {
    it('answers the envelope with links, meta and the entry (protected fields hidden)', async () => {
      const res = await app.request('GET', '/api/streams/planets/entries/1');
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['errors', 'links', 'meta', 'data']);
      expect(res.json.errors).toEqual([]);
      expect(res.json.links).toEqual({
        self: `${app.url}/api/streams/planets/entries/1`,
        streams: `${app.url}/api/streams`,
        stream: `${app.url}/api/streams/planets`,
        entries: `${app.url}/api/streams/planets/entries`,
      });
      expect(res.json.meta).toEqual({ parameters: { stream: 'planets', entry: '1' }, stream: 'planets' });
      expect(res.json.data).toMatchObject({ id: 1, name: 'Tatooine', climate: 'arid' });
      expect(res.json.data.secret).toBeUndefined();
    });

    it('links related entries on single-entry show', async () => {
      const res = await app.request('GET', '/api/streams/people/entries/1');
      expect(res.json.links.homeworld).toBe(`${app.url}/api/streams/planets/entries/1`);
    });

    it('sends an ETag and answers 304 with no body to If-None-Match', async () => {
      const first = await app.request('GET', '/api/streams/planets/entries/2');
      const etag = first.headers.etag!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const again = await app.request('GET', '/api/streams/planets/entries/2', undefined, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(etag);
      const weak = await app.request('GET', '/api/streams/planets/entries/2', undefined, { 'if-none-match': `"x", W/${etag}` });
      expect(weak.status).toBe(304);
      const other = await app.request('GET', '/api/streams/planets/entries/2', undefined, { 'if-none-match': '"other"' });
      expect(other.status).toBe(200);
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const get = await app.request('GET', '/api/streams/planets/entries/3');
      const head = await app.request('HEAD', '/api/streams/planets/entries/3');
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
      expect(head.headers.etag).toBe(get.headers.etag);
    });

    it('answers 404 for an unknown entry or stream', async () => {
      const entry = await app.request('GET', '/api/streams/planets/entries/99');
      expect(entry.status).toBe(404);
      expect(entry.json).toMatchObject({ errors: [{ message: 'Entry [99] not found.' }], data: null });
      for (const [method, target] of [
        ['GET', '/api/streams/nope/entries'],
        ['GET', '/api/streams/nope/entries/1'],
        ['POST', '/api/streams/nope/entries'],
        ['PUT', '/api/streams/nope/entries/1'],
        ['PATCH', '/api/streams/nope/entries/1'],
        ['DELETE', '/api/streams/nope/entries/1'],
        ['POST', '/api/streams/nope/query'],
        ['GET', '/api/streams/nope'],
        ['DELETE', '/api/streams/nope'],
      ] as const) {
        const res = await app.request(method, target, method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' });
        expect(res.status, `${method} ${target}`).toBe(404);
        expect(res.json.data, `${method} ${target}`).toBeNull();
        expect(res.json.errors).toHaveLength(1);
      }
    });

    it('answers 405 with Allow for a method not served, and OPTIONS with 204 + Allow', async () => {
      const res = await app.request('POST', '/api/streams/planets/entries/1', { name: 'x' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
      expect(res.json.data).toBeNull();
      const options = await app.request('OPTIONS', '/api/streams/planets/entries');
      expect(options.status).toBe(204);
      expect(options.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
      const query = await app.request('GET', '/api/streams/planets/query');
      expect(query.status).toBe(405);
      expect(query.headers.allow).toBe('POST, OPTIONS');
      expect((await app.request('GET', '/api/nothing')).status).toBe(404);
    });
  });

  describe('GET the list', () => {
    it('pages with meta and links that keep the other parameters', async () => {
      const res = await app.request('GET', '/api/streams/planets/entries?per_page=2&page=2&orderBy[id]=asc');
      expect(res.status).toBe(200);
      expect(res.json.data.map((e: { id: number }) => e.id)).toEqual([3, 4]);
      expect(res.json.meta).toEqual({ parameters: { stream: 'planets' }, stream: 'planets', total: 5, per_page: 2, last_page: 3, current_page: 2 });
      const base = `${app.url}/api/streams/planets/entries?per_page=2&orderBy[id]=asc`;
      expect(res.json.links).toMatchObject({
        self: `${app.url}/api/streams/planets/entries?per_page=2&page=2&orderBy[id]=asc`,
        first_page: `${base}&page=1`,
        next_page: `${base}&page=3`,
        previous_page: `${base}&page=1`,
      });
      const last = await app.request('GET', '/api/streams/planets/entries?per_page=2&page=3');
      expect(last.json.links.next_page).toBeNull();
      const first = await app.request('GET', '/api/streams/planets/entries?per_page=2');
      expect(first.json.links.previous_page).toBeNull();
    });

    it('defaults to 100 per page in key order, answers [] past the last page and clamps per_page', async () => {
      const res = await app.request('GET', '/api/streams/planets/entries');
      expect(res.json.meta.per_page).toBe(100);
      expect(res.json.data.map((e: { id: number }) => e.id)).toEqual([1, 2, 3, 4, 5]);
      const past = await app.request('GET', '/api/streams/planets/entries?page=9');
      expect(past.status).toBe(200);
      expect(past.json.data).toEqual([]);
      const big = await app.request('GET', '/api/streams/planets/entries?per_page=100000');
      expect(big.json.meta.per_page).toBe(1000);
    });

    it('filters with where/constraint (filters apply to total too) and sorts with orderBy and order_by', async () => {
      const res = await app.request('GET', '/api/streams/planets/entries?where[climate]=temperate&orderBy[population]=desc&per_page=1');
      expect(res.json.meta.total).toBe(2);
      expect(res.json.data.map((e: { name: string }) => e.name)).toEqual(['Alderaan']);
      const like = await app.request('GET', `/api/streams/planets/entries?where[name]=${encodeURIComponent('%O%')}&constraint[name]=like`);
      expect(like.json.data.map((e: { name: string }) => e.name)).toEqual(['Tatooine', 'Hoth', 'Dagobah']);
      const prefix = await app.request('GET', `/api/streams/planets/entries?where[name]=${encodeURIComponent('h%')}&constraint[name]=LIKE`);
      expect(prefix.json.data.map((e: { name: string }) => e.name)).toEqual(['Hoth']);
      const zero = await app.request('GET', '/api/streams/planets/entries?where[population]=0&order_by[name]=desc');
      expect(zero.json.data.map((e: { name: string }) => e.name)).toEqual(['Hoth', 'Dagobah']);
      const gt = await app.request('GET', '/api/streams/planets/entries?where[population]=1000&constraint[population]=%3E');
      expect(gt.json.data.map((e: { id: number }) => e.id)).toEqual([1, 2]);
      const none = await app.request('GET', '/api/streams/planets/entries?where[climate]=volcanic');
      expect(none.json.data).toEqual([]);
      expect(none.json.meta.total).toBe(0);
    });

    it('sends an ETag on lists and honours If-None-Match', async () => {
      const res = await app.request('GET', '/api/streams/planets/entries');
      const again = await app.request('GET', '/api/streams/planets/entries', undefined, { 'if-none-match': res.headers.etag! });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
    });

    it.each([
      'page=0',
      'per_page=abc',
      'where[na-me]=x',
      'where[name]=x&constraint[name]=REGEXP',
      'where[name][$ne]=x',
      'orderBy[name]=sideways',
      '__proto__[x]=1',
      'where[constructor]=1',
    ])('answers 400 with a message for %s', async (query) => {
      const res = await app.request('GET', `/api/streams/planets/entries?${query}`);
      expect(res.status).toBe(400);
      expect(res.json.data).toBeNull();
      expect(res.json.errors[0].message.length).toBeGreaterThan(5);
    });
  });

  describe('the query endpoint', () => {
    it('runs read criteria and answers like the list', async () => {
      const res = await app.request('POST', '/api/streams/planets/query?per_page=2', {
        parameters: [{ where: ['population', '>', 500] }, { orderBy: ['population', 'desc'] }],
      });
      expect(res.status).toBe(200);
      expect(res.json.data.map((e: { id: number }) => e.id)).toEqual([2, 1]);
      expect(res.json.meta).toMatchObject({ total: 3, per_page: 2, current_page: 1, last_page: 2, stream: 'planets' });
      const paged = await app.request('POST', '/api/streams/planets/query', { parameters: [{ where: ['climate', 'temperate'] }], per_page: 1, page: 2 });
      expect(paged.json.meta).toMatchObject({ total: 2, per_page: 1, current_page: 2 });
    });

    it('refuses write methods and unknown methods with 400 and changes nothing', async () => {
      for (const step of [{ create: [{ id: 9, name: 'Bespin' }] }, { save: [] }, { delete: [] }, { truncate: [] }, { launchMissiles: [] }]) {
        const res = await app.request('POST', '/api/streams/planets/query', { parameters: [step] });
        expect(res.status, JSON.stringify(step)).toBe(400);
      }
      expect((await app.request('GET', '/api/streams/planets/entries')).json.meta.total).toBe(5);
    });

    it('refuses a malformed parameters body', async () => {
      expect((await app.request('POST', '/api/streams/planets/query', { parameters: 'where' })).status).toBe(400);
      expect((await app.request('POST', '/api/streams/planets/query', { parameters: [{ where: ['a', { $gt: 1 }] }] })).status).toBe(400);
    });
  });
});

describe('entry writes over HTTP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ streams, data, config: { http: { max_body: 2048 } } });
  });
  afterAll(async () => app?.close());

  it('POST creates (201, Location, meta.payload) and the entry is on disk', async () => {
    const res = await app.request('POST', '/api/streams/planets/entries', { id: 10, name: 'Bespin', climate: 'temperate' });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({ id: 10, name: 'Bespin', climate: 'temperate' });
    expect(res.json.meta.payload).toEqual({ id: 10, name: 'Bespin', climate: 'temperate' });
    expect(res.json.meta.stream).toBe('planets');
    expect(res.json.links.location).toBe(`${app.url}/api/streams/planets/entries/10`);
    expect(res.headers.location).toBe(`${app.url}/api/streams/planets/entries/10`);
    expect(existsSync(path.join(app.root, 'streams/data/planets/10.json'))).toBe(true);
    expect((await app.request('GET', '/api/streams/planets/entries/10')).json.data.name).toBe('Bespin');
  });

  it('POST accepts form-encoded bodies', async () => {
    const res = await app.request('POST', '/api/streams/planets/entries', 'id=11&name=Endor&climate=forest', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({ id: 11, name: 'Endor', climate: 'forest' });
  });

  it('POST answers 409 with one error per failed rule and writes nothing', async () => {
    const res = await app.request('POST', '/api/streams/planets/entries', { id: 12, climate: 'none' });
    expect(res.status).toBe(409);
    expect(res.json.data).toBeNull();
    expect(res.json.errors[0]).toMatchObject({ meta: { field: 'name', rule: 'required' } });
    expect(existsSync(path.join(app.root, 'streams/data/planets/12.json'))).toBe(false);
  });

  it('answers 400 for malformed JSON, non-object bodies and forbidden keys, 415 for other types, 413 over http.max_body', async () => {
    const cases: Array<[string, Record<string, string>, number]> = [
      ['{"name":', { 'content-type': 'application/json' }, 400],
      ['[1,2,3]', { 'content-type': 'application/json' }, 400],
      ['"text"', { 'content-type': 'application/json' }, 400],
      ['{"name":"x","__proto__":{"admin":true}}', { 'content-type': 'application/json' }, 400],
      ['{"name":"x","$set":{"a":1}}', { 'content-type': 'application/json' }, 400],
      ['name=x&__proto__[admin]=1', { 'content-type': 'application/x-www-form-urlencoded' }, 400],
      ['name: x', { 'content-type': 'text/yaml' }, 415],
      [JSON.stringify({ name: 'x'.repeat(5000) }), { 'content-type': 'application/json' }, 413],
    ];
    for (const [body, headers, status] of cases) {
      const res = await app.request('POST', '/api/streams/planets/entries', body, headers);
      expect(res.status, body.slice(0, 40)).toBe(status);
      expect(res.json.errors[0].message.length).toBeGreaterThan(5);
    }
    expect((await app.request('GET', '/api/streams/planets/entries')).json.meta.total).toBe(7);
  });

  it('PUT replaces: 200, fields not supplied are gone; the URL key wins', async () => {
    const res = await app.request('PUT', '/api/streams/planets/entries/2', { id: 999, name: 'Alderaan (destroyed)' });
    expect(res.status).toBe(200);
    expect(res.json.data.id).toBe(2);
    expect(res.json.data.name).toBe('Alderaan (destroyed)');
    expect(res.json.data.climate ?? null).toBeNull();
    expect(res.json.meta.payload).toEqual({ id: 999, name: 'Alderaan (destroyed)' });
    expect(res.json.meta.parameters).toEqual({ stream: 'planets', entry: '2' });
    expect(res.json.links.location).toBeUndefined();
  });

  it('PATCH merges: 200, fields not supplied are kept', async () => {
    const res = await app.request('PATCH', '/api/streams/planets/entries/3', { population: 1001 });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: 3, name: 'Yavin IV', climate: 'temperate', population: 1001 });
  });

  it('PUT and PATCH on a missing entry create it with the URL key (201)', async () => {
    const put = await app.request('PUT', '/api/streams/planets/entries/20', { name: 'Kamino' });
    expect(put.status).toBe(201);
    expect(put.json.data).toMatchObject({ id: 20, name: 'Kamino' });
    expect(put.json.links.location).toBe(`${app.url}/api/streams/planets/entries/20`);
    const patch = await app.request('PATCH', '/api/streams/planets/entries/21', { name: 'Geonosis' });
    expect(patch.status).toBe(201);
    expect(patch.json.data).toMatchObject({ id: 21, name: 'Geonosis' });
  });

  it('PUT and PATCH answer 409 on validation failure and change nothing', async () => {
    const before = readFileSync(path.join(app.root, 'streams/data/planets/4.json'), 'utf8');
    const res = await app.request('PATCH', '/api/streams/planets/entries/4', { population: 'lots' });
    expect(res.status).toBe(409);
    expect(res.json.errors[0].meta.field).toBe('population');
    const put = await app.request('PUT', '/api/streams/planets/entries/4', { climate: 'cold' });
    expect(put.status).toBe(409);
    expect(readFileSync(path.join(app.root, 'streams/data/planets/4.json'), 'utf8')).toBe(before);
  });

  it('DELETE answers 204 with an empty body, then 404', async () => {
    const res = await app.request('DELETE', '/api/streams/planets/entries/5');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(existsSync(path.join(app.root, 'streams/data/planets/5.json'))).toBe(false);
    const again = await app.request('DELETE', '/api/streams/planets/entries/5');
    expect(again.status).toBe(404);
    expect(again.json.errors[0].message).toBe('Entry [5] not found.');
  });

  it('changes the ETag when the entry changes', async () => {
    const a = await app.request('GET', '/api/streams/planets/entries/1');
    await app.request('PATCH', '/api/streams/planets/entries/1', { climate: 'very arid' });
    const b = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'if-none-match': a.headers.etag! });
    expect(b.status).toBe(200);
    expect(b.headers.etag).not.toBe(a.headers.etag);
  });
});

describe('relationship links and failures', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams: {
        ...streams,
        crews: {
          name: 'Crews',
          fields: {
            id: 'integer',
            name: 'string',
            members: { type: 'relationship', config: { related: 'people', multiple: true } },
            base: { type: 'relationship', config: { related: 'planets' } },
            about: { type: 'polymorphic' },
          },
        },
      },
      data: { ...data, crews: [{ id: 1, name: 'Rogue', members: [1], base: null, about: { '@stream': 'planets', id: 4 } }] },
    });
  });
  afterAll(async () => app?.close());

  it('links a multiple relationship to a filtered list and skips empty ones', async () => {
    const res = await app.request('GET', '/api/streams/crews/entries/1');
    expect(res.status).toBe(200);
    expect(res.json.links.members).toBe(`${app.url}/api/streams/people/entries?where[id][]=1&constraint[id]=IN`);
    expect(res.json.links.base).toBeUndefined();
    expect(res.json.links.about).toBe(`${app.url}/api/streams/planets/entries/4`);
    const follow = await app.request('GET', res.json.links.members.slice(app.url.length));
    expect(follow.json.data.map((p: { name: string }) => p.name)).toEqual(['Luke Skywalker']);
  });

  it('does not put relationship links on lists', async () => {
    const res = await app.request('GET', '/api/streams/people/entries');
    expect(res.json.links.homeworld).toBeUndefined();
  });
});
