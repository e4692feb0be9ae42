/**
 * Issue #28: a stream's own `routes` (views and handlers of addons) show entries under the same
 * rules as the API: an entry outside the view rule is a 404, a list holds only the visible rows,
 * hidden fields are left out, a stream without a rule for the caller is 401/403.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { STREAM_ROUTES } from '../../plugins/stream-routes/index.js';
import { bearer, POSTS_ACCESS, POSTS_FIELDS, startAccessApp, type AccessApp } from './fixture.js';

const site = definePlugin({
  name: 'site',
  requires: ['stream-routes'],
  register({ use }) {
    use(STREAM_ROUTES).registerRenderer({
      type: 'application/json',
      render: (_view, data) => JSON.stringify({ entry: data.entry ?? null, entries: data.entries ?? null, access: (data.stream as Record<string, unknown>).access ?? null }),
    });
  },
});

let s: AccessApp;
beforeAll(async () => {
  const posts = { name: 'Posts', fields: POSTS_FIELDS, access: POSTS_ACCESS, route: '/posts/{id}', routes: { index: { uri: '/posts', view: 'posts.index', verb: 'get' } } };
  s = await startAccessApp({ extra: { streams: { posts }, plugins: [site] } });
});
afterAll(async () => s?.app.close());

it('views show only what the caller may view, without hidden fields or the rules', async () => {
  const list = await s.app.request('GET', '/posts');
  expect(list.status).toBe(200);
  expect(list.json.entries.map((e: { id: number }) => e.id)).toEqual([1, 3]);
  for (const e of list.json.entries) expect('notes' in e).toBe(false);
  expect(list.json.access).toBeNull();
  expect((await s.app.request('GET', '/posts/2')).status).toBe(404);
  const own = await s.app.request('GET', '/posts/2', undefined, bearer(s.tokens.alice));
  expect(own.status).toBe(200);
  expect(own.json.entry).toMatchObject({ id: 2, notes: 'n2' });
  const admin = await s.app.request('GET', '/posts', undefined, bearer(s.tokens.boss));
  expect(admin.json.entries.map((e: { id: number }) => e.id)).toEqual([1, 2, 3, 4]);
  expect(admin.json.access).not.toBeNull();
});
