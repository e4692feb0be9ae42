import { describe, expect, it } from 'vitest';
import { startApp } from '../helpers/app.js';

/**
 * Issue #13 item 9: a seeded fuzz run of hostile request shapes (the red team's findings and
 * their neighbours). Every answer must be an envelope with a 2xx/3xx/4xx status (never a
 * 500, never a hang), and the server must answer /healthz at the end.
 */

let seed = 20_261_124;
const random = (n: number): number => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
const pick = <T>(list: readonly T[]): T => list[random(list.length)]!;

const NAMES = ['title', 'year', 'tags', 'author', '__proto__', 'constructor', 'toString', 'a.b.c', '$where', 'x'.repeat(300), '', 'ob.lat', 'ÿ', 'id'];
const VALUES = ['1', '-0', '9007199254740993', '1e400', '%a%a%a%b', `%${'a_'.repeat(300)}b%`, 'x'.repeat(1500), '\u0000', '\ufeff1', 'true', 'null', '[]', '{}', '((a+)+)+$', "'; DROP", '😀', ''];
const OPERATORS = ['=', '!=', 'LIKE', 'NOT LIKE', 'IN', 'BETWEEN', 'NULL', 'bogus', '>', '$ne', ''];
const PATHS = ['/api/streams/books/entries', '/api/streams/books/entries/1', '/api/streams/books/entries/abc', `/api/streams/books/entries/${'9'.repeat(30)}`, '/api/streams/books', '/api/streams', '/api/streams/books/query', '/api/streams/nope/entries', '/api/streams/..%2f..%2fetc/entries', '/api/streams/books/entries/..%2fconfig', '/api/openapi.json'];

function hostileBody(depth = 0): unknown {
  switch (random(9)) {
    case 0: return { title: pick(VALUES), year: pick(VALUES) };
    case 1: return JSON.parse(`{"__proto__": {"polluted": 1}, "title": "x"}`);
    case 2: return Object.fromEntries(Array.from({ length: random(3000) }, (_, i) => [`k${i}`, i]));
    case 3: return { tags: Array.from({ length: random(5000) }, (_, i) => i), author: { $gt: 1 } };
    case 4: return depth < 80 ? { nested: hostileBody(depth + 1) } : 'deep';
    case 5: return { id: pick([-0, 2 ** 60, 1.5, 'abc', null, [], {}]) };
    case 6: return { parameters: [{ where: [pick(NAMES), pick(OPERATORS), pick(VALUES)] }, { [pick(['create', 'delete', 'orderBy', 'with'])]: [pick(NAMES)] }] };
    case 7: return { id: 'hijack', routes: { r: { uri: pick(['/api/x', '/{a}/{b}', '/healthz', '/pages/{id}']) } }, config: { source: { path: pick(['..', '/etc', 'streams/data/books', 'streams']) } } };
    default: return pick(VALUES);
  }
}

function hostileQuery(): string {
  const parts: string[] = [];
  for (let i = 0; i < random(4); i++) {
    const name = encodeURIComponent(pick(NAMES));
    parts.push(`where[${name}]=${encodeURIComponent(pick(VALUES))}`, `constraint[${name}]=${encodeURIComponent(pick(OPERATORS))}`);
  }
  if (random(3) === 0) parts.push(`orderBy[${encodeURIComponent(pick(NAMES))}]=${pick(['asc', 'desc', 'sideways'])}`);
  if (random(4) === 0) parts.push(`per_page=${pick(['0', '-1', '1e9', '20', 'x'])}`, `page=${pick(['0', '2', '99999999999'])}`);
  if (random(5) === 0) parts.push(`with=${encodeURIComponent(pick(NAMES))}`);
  return parts.join('&');
}

describe('fuzz: hostile shapes', () => {
  it('never answers 500, never hangs, and the server stays up', async () => {
    const app = await startApp({
      streams: {
        authors: { fields: { id: 'integer', name: 'string' } },
        books: {
          fields: {
            id: 'integer',
            title: { type: 'string', rules: ['regex:/^[^<>]*$/'] },
            year: 'integer',
            tags: 'array',
            author: { type: 'relationship', config: { related: 'authors' } },
            ob: 'object',
          },
        },
      },
      data: { authors: [{ id: 1, name: 'A' }], books: [{ id: 1, title: 'Dune', year: 1965, ob: { lat: 1.5 } }] },
      config: { api: { max_per_page: 50 } },
    });
    try {
      const failures: string[] = [];
      for (let i = 0; i < 400; i++) {
        const method = pick(['GET', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
        const path = pick(PATHS);
        const query = random(2) === 0 ? `?${hostileQuery()}` : '';
        const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify(hostileBody());
        const res = await app.request(method, `${path}${query}`, body, body ? { 'content-type': 'application/json' } : {}).catch((error: Error) => ({ status: 0, text: error.message, json: undefined }));
        if (res.status >= 500 || res.status === 0) failures.push(`${method} ${path}${query.slice(0, 120)} -> ${res.status} ${res.text.slice(0, 160)}`);
        else if (res.status !== 204 && res.status !== 304 && path.startsWith('/api/streams') && !(res.json && typeof res.json === 'object' && 'errors' in res.json)) {
          failures.push(`${method} ${path} -> ${res.status} without the envelope`);
        }
      }
      expect(failures.slice(0, 10)).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((await app.request('GET', '/healthz')).status).toBe(200);
    } finally {
      await app.close();
    }
  }, 120_000);
});
