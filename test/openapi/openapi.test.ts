import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { responseValidator } from './helpers.js';

/** Issue #18: the live OpenAPI document, exact per stream, proven against the real answers. */

const streams = {
  authors: { fields: { id: 'integer', name: { type: 'string', required: true } } },
  books: {
    fields: [
      { handle: 'id', type: 'integer', config: { default: 'increment' } },
      { handle: 'title', type: 'string', required: true, rules: ['max:200'] },
      { handle: 'author', type: 'relationship', config: { related: 'authors' } },
      { handle: 'status', type: 'select', config: { options: { draft: 'Draft', published: 'Published' } } },
      { handle: 'contact', type: 'email' },
      { handle: 'released', type: 'date' },
      { handle: 'pages', type: 'integer', rules: ['min:1'] },
      { handle: 'password', type: 'hash', protected: true },
    ],
  },
};
const data = { authors: [{ id: 1, name: 'Ursula' }], books: [{ id: 1, title: 'Earthsea', author: 1, status: 'published' }] };

type Doc = Parameters<typeof responseValidator>[0] & { components: { schemas: Record<string, Record<string, unknown>>; securitySchemes?: unknown }; security?: unknown };

describe('GET /api/openapi.json', () => {
  let app: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    app = await startApp({ streams, data });
    const res = await app.request('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    doc = res.json as Doc;
  });
  afterAll(() => app.close());

  it('is a valid OpenAPI 3.1 document (independent validator)', async () => {
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((doc as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('describes each stream exactly: its paths, operations and field schemas', () => {
    const ops = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
    expect(ops('/api/streams/books/entries')).toEqual(['get', 'post']);
    expect(ops('/api/streams/books/entries/{key}')).toEqual(['delete', 'get', 'patch', 'put']);
    expect(ops('/api/streams/books/query')).toEqual(['post']);
    expect(ops('/api/streams')).toEqual(['get', 'post']);
    expect(ops('/healthz')).toEqual(['get']);
    expect(ops('/readyz')).toEqual(['get']);
    const entry = doc.components.schemas['books.Entry']! as { properties: Record<string, Record<string, unknown>> };
    const input = doc.components.schemas['books.Input']! as { properties: Record<string, Record<string, unknown>>; required: string[] };
    expect(Object.keys(entry.properties)).not.toContain('password');
    expect(Object.keys(input.properties)).toContain('password');
    expect(input.required).toEqual(['title']);
    // An answer always carries the key, the required fields and the fields with a default.
    expect((entry as unknown as { required: string[] }).required).toEqual(['id', 'title']);
    expect(doc.components.schemas['books.Patch']).not.toHaveProperty('required');
    expect(input.properties.title).toEqual({ type: 'string', maxLength: 200 });
    expect(input.properties.status).toEqual({ enum: ['draft', 'published'] });
    expect(input.properties.contact).toEqual({ type: ['string', 'null'], format: 'email' });
    expect(input.properties.released).toEqual({ type: ['string', 'null'], format: 'date' });
    expect(input.properties.pages).toEqual({ type: ['integer', 'null'], minimum: 1 });
    expect(input.properties.author).toEqual({ type: ['integer', 'null'] });
    for (const status of ['400', '404', '405', '409', '412', '413', '414', '429', '503']) {
      expect(Object.keys((doc.paths['/api/streams/books/entries']!.post as { responses: object }).responses)).toContain(status);
    }
  });

  it('every live answer validates against the document (list, show, create, 404, 409, definitions, query, health)', async () => {
    const check = responseValidator(doc);
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/streams/books/entries'],
      ['GET', '/api/streams/books/entries?where[status]=published&orderBy[id]=desc&per_page=1'],
      ['GET', '/api/streams/books/entries/1'],
      ['GET', '/api/streams/books/entries/99'],
      ['POST', '/api/streams/books/entries', { title: 'Tehanu', author: 1, status: 'draft', contact: 'a@b.example', released: '1990-02-01', pages: 252 }],
      ['POST', '/api/streams/books/entries', { title: '' }],
      ['PATCH', '/api/streams/books/entries/1', { pages: 0 }],
      ['PUT', '/api/streams/books/entries/1', { title: 'A Wizard of Earthsea' }],
      ['POST', '/api/streams/books/query', { parameters: [{ where: ['status', '=', 'published'] }] }],
      ['GET', '/api/streams'],
      ['GET', '/api/streams/books'],
      ['GET', '/api/streams/nope'],
      ['GET', '/healthz'],
      ['GET', '/readyz'],
    ];
    // The check has teeth: a body the document does not allow fails it.
    expect(check('GET', '/api/streams/books/entries/1', 200, { data: { id: 'x' }, errors: [], links: {}, meta: {} }).ok).toBe(false);
    expect(check('GET', '/api/streams/books/entries/1', 404, { data: null, errors: [], links: {}, meta: {} }).ok).toBe(false);
    for (const [method, target, body] of calls) {
      const res = await app.request(method, target, body);
      const path = target.split('?')[0]!;
      const verdict = check(method, path, res.status, res.json);
      expect(verdict.ok, `${method} ${target} -> ${res.status}: ${verdict.why}\n${res.text.slice(0, 400)}`).toBe(true);
    }
  });

  it('a request built only from the document is accepted', async () => {
    const input = doc.components.schemas['books.Input']! as { properties: Record<string, { type?: string | string[]; enum?: unknown[]; format?: string }>; required: string[] };
    const body: Record<string, unknown> = {};
    for (const name of input.required) {
      const schema = input.properties[name]!;
      const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
      body[name] = schema.enum ? schema.enum[0] : type === 'integer' ? 1 : type === 'boolean' ? true : 'from the document';
    }
    const res = await app.request('POST', '/api/streams/books/entries', body);
    expect(res.status).toBe(201);
  });

  it('follows definition changes: a stream created over the API appears at once', async () => {
    const created = await app.request('POST', '/api/streams', { id: 'films', fields: { id: 'integer', title: 'string' } });
    expect(created.status).toBe(201);
    const started = Date.now();
    const res = await app.request('GET', '/api/openapi.json');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(Object.keys(res.json.paths)).toContain('/api/streams/films/entries/{key}');
    expect(res.json.components.schemas['films.Entry'].properties.title).toEqual({ type: ['string', 'null'] });
  });

  it('answers If-None-Match with 304', async () => {
    const first = await app.request('GET', '/api/openapi.json');
    const again = await app.request('GET', '/api/openapi.json', undefined, { 'if-none-match': first.headers.etag! });
    expect(again.status).toBe(304);
  });
});

describe('the document follows the interface', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams,
      data,
      config: {
        api: {
          middleware: ['auth.bearer'],
          auth: { tokens: ['t0k3n-secret'] },
          interfaces: [
            { name: 'public', prefix: 'public', middleware: ['readonly'], resources: ['entries'] },
            { name: 'admin', prefix: 'admin' },
          ],
        },
      },
    });
  });
  afterAll(() => app.close());
  const auth = { authorization: 'Bearer t0k3n-secret' };

  it('a read-only entries interface lists only reads, and bearer security when auth.bearer is on', async () => {
    const res = await app.request('GET', '/public/openapi.json', undefined, auth);
    expect(res.status).toBe(200);
    const paths = res.json.paths as Record<string, object>;
    expect(Object.keys(paths['/public/streams/books/entries']!)).toEqual(['get']);
    expect(Object.keys(paths['/public/streams/books/entries/{key}']!)).toEqual(['get']);
    expect(paths['/public/streams']).toBeUndefined();
    expect(paths['/public/streams/books/query']).toBeUndefined();
    expect(res.json.components.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } });
    expect(res.json.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(res.json.paths['/admin/streams'] ?? {})).toEqual([]);
    const admin = await app.request('GET', '/admin/openapi.json', undefined, auth);
    expect(Object.keys(admin.json.paths['/admin/streams'])).toEqual(['get', 'post']);
  });

  it('the interface middleware guards the document like any route', async () => {
    expect((await app.request('GET', '/public/openapi.json')).status).toBe(401);
    expect((await app.request('GET', '/public/docs')).status).toBe(401);
  });
});

describe('the gate', () => {
  it('denies the document when the API is disabled', async () => {
    const app = await startApp({ streams, data, config: { api: { enabled: false } } });
    try {
      expect((await app.request('GET', '/api/openapi.json')).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
