import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Issue #34 item 5: a misspelled or unknown query parameter (`wher[year]`, `per_pge`, `_sort`)
 * is reported in `meta.warnings`, with "did you mean" when a known one is near, and changes
 * nothing else: the answer is the one without it.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const books = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, title: `Book ${i + 1}`, year: 1960 + i }));

describe('unknown query parameters', () => {
  it('are reported with the nearest known name, and change nothing else', async () => {
    app = await startApp({ streams: { books: { fields: { id: 'integer', title: 'string', year: 'integer' } } }, data: { books } });
    const plain = await app.request('GET', '/api/streams/books/entries');
    const typo = await app.request('GET', '/api/streams/books/entries?wher[year]=1970&per_pge=2&_sort=title');
    expect(typo.status).toBe(200);
    expect(typo.json.meta.warnings).toEqual([
      'Unknown query parameter [wher[year]] (did you mean where?): it was ignored.',
      'Unknown query parameter [per_pge] (did you mean per_page?): it was ignored.',
      'Unknown query parameter [_sort]: it was ignored.',
    ]);
    expect(typo.json.data).toEqual(plain.json.data);
    expect(typo.json.meta.total).toBe(plain.json.meta.total);
    // Known parameters: no warnings key at all.
    const known = await app.request('GET', '/api/streams/books/entries?where[year]=1965&per_page=2&orderBy[title]=desc');
    expect(known.json.meta.warnings).toBeUndefined();
    expect(known.json.data.map((b: { id: number }) => b.id)).toEqual([6]);
    // On a single entry and on the definitions list too.
    expect((await app.request('GET', '/api/streams/books/entries/1?wth=author')).json.meta.warnings).toEqual(['Unknown query parameter [wth] (did you mean with?): it was ignored.']);
    expect((await app.request('GET', '/api/streams?pag=2')).json.meta.warnings).toEqual(['Unknown query parameter [pag] (did you mean page?): it was ignored.']);
  });
});
