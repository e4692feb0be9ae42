import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Deleting a stream that others depend on (issue #13's replay "parent delete"; issue #14 item 4). */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const streams = {
  authors: { fields: { id: 'integer', name: 'string' } },
  books: { fields: { id: 'integer', author: { type: 'relationship', config: { related: 'authors' } } } },
  base: { fields: { id: 'integer', title: 'string' } },
  articles: { extends: 'base', fields: { body: 'string' } },
};

describe('DELETE of a stream others depend on', () => {
  it('is a 409 naming each dependent; ?force=true deletes past relationships, never past children', async () => {
    app = await startApp({ streams, data: { authors: [{ id: 1, name: 'U' }], books: [{ id: 1, author: 1 }] } });
    const refused = await app.request('DELETE', '/api/streams/authors');
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].meta).toEqual({ field: 'books.author', rule: 'dependents' });
    const parent = await app.request('DELETE', '/api/streams/base?force=true');
    expect(parent.status).toBe(409);
    expect(parent.json.errors[0].message).toMatch(/Stream \[articles\] extends \[base\]/);
    expect((await app.request('GET', '/api/streams/base')).status).toBe(200);
    const forced = await app.request('DELETE', '/api/streams/authors?force=true');
    expect(forced.status).toBe(204);
    // The dependent keeps its raw value, without a link.
    const book = await app.request('GET', '/api/streams/books/entries/1');
    expect(book.status).toBe(200);
    expect(book.json.data.author).toBe(1);
    expect(book.json.links.author).toBeUndefined();
  });
});
