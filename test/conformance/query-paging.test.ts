import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #20 item 3: the query endpoint's pages can be followed (its criteria live in the body). */
describe('POST /api/streams/{stream}/query pagination', () => {
  let app: TestApp;
  const body = { parameters: [{ where: ['n', '>', 2] }, { orderBy: ['n', 'desc'] }] };
  beforeAll(async () => {
    app = await startApp({ streams: { nums: { fields: { id: 'integer', n: 'integer' } } }, data: { nums: Array.from({ length: 9 }, (_, i) => ({ id: i + 1, n: i + 1 })) } });
  });
  afterAll(() => app.close());

  it('offers no page links that would lose the body, and meta says how to page', async () => {
    const first = await app.request('POST', '/api/streams/nums/query?per_page=3', body);
    expect(first.status).toBe(200);
    expect(first.json.links.next_page).toBeUndefined();
    expect(first.json.links.first_page).toBeUndefined();
    expect(first.json.meta).toMatchObject({ total: 7, per_page: 3, last_page: 3, current_page: 1, next_page: 2, previous_page: null });
    expect(first.json.meta.paging).toMatch(/POST the same body again with \?page=N/);
    // Following meta's instructions gives the next page of the same criteria.
    const second = await app.request('POST', `/api/streams/nums/query?per_page=3&page=${first.json.meta.next_page}`, body);
    expect(second.json.data.map((e: { n: number }) => e.n)).toEqual([6, 5, 4]);
    expect(second.json.meta).toMatchObject({ current_page: 2, next_page: 3, previous_page: 1 });
    const last = await app.request('POST', '/api/streams/nums/query?per_page=3&page=3', body);
    expect(last.json.data.map((e: { n: number }) => e.n)).toEqual([3]);
    expect(last.json.meta.next_page).toBeNull();
  });

  it('the GET list keeps its followable links', async () => {
    const res = await app.request('GET', '/api/streams/nums/entries?per_page=4');
    expect(res.json.links.next_page).toBe(`${app.url}/api/streams/nums/entries?per_page=4&page=2`);
  });
});
