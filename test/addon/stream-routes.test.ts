import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, type Plugin } from '../../kernel/index.js';
import { STREAM_ROUTES } from '../../plugins/stream-routes/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/** An addon that serves the spec's stream `routes`: a controller action and a view renderer. */
const site: Plugin = definePlugin({
  name: 'site',
  requires: ['stream-routes'],
  register({ use }) {
    const routes = use(STREAM_ROUTES);
    routes.registerHandler('App\\Books@cover', ({ entry, params }) => ({
      status: 200,
      type: 'text/plain; charset=utf-8',
      body: `cover of ${String(entry?.title)} (${params.id})`,
    }));
    routes.registerRenderer({
      render: (view, data) =>
        data.entry
          ? `<h1 data-view="${view}">${String(data.entry.title)}</h1>`
          : `<ul data-view="${view}">${(data.entries ?? []).map((e) => `<li>${String(e.title)}</li>`).join('')}</ul>`,
    });
  },
});

const books = {
  fields: { id: 'integer', title: 'string', slug: 'string', secret: { type: 'string', protected: true } },
  route: '/books/{id}',
  routes: {
    index: { uri: '/books', view: 'books.index', verb: 'get' },
    by_slug: { uri: '/b/{entry.slug}', view: 'books.show' },
    cover: { uri: '/books/{id}/cover', uses: 'App\\Books@cover', verb: 'get' },
    limited: { uri: '/limited/{id}', uses: 'App\\Books@cover', middleware: ['readonly'] },
    missing: { uri: '/nothing/{id}', uses: 'App\\Nobody@here' },
  },
};
const data = { books: [{ id: 1, title: 'Dune', slug: 'dune', secret: 's' }, { id: 2, title: 'Emma', slug: 'emma' }] };

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('stream routes', () => {
  it('renders a view route by key and by an entry field, and a list view', async () => {
    app = await startApp({ streams: { books }, data, plugins: [site] });
    const show = await app.request('GET', '/books/1');
    expect(show.status).toBe(200);
    expect(show.headers['content-type']).toMatch(/text\/html/);
    expect(show.text).toBe('<h1 data-view="books.view">Dune</h1>');
    const bySlug = await app.request('GET', '/b/emma');
    expect(bySlug.text).toBe('<h1 data-view="books.show">Emma</h1>');
    const list = await app.request('GET', '/books');
    expect(list.text).toBe('<ul data-view="books.index"><li>Dune</li><li>Emma</li></ul>');
    expect((await app.request('GET', '/books/99')).status).toBe(404);
    expect((await app.request('GET', '/b/nope')).status).toBe(404);
  });

  it('calls the handler a `uses` names, with the serialized entry (protected fields hidden)', async () => {
    app = await startApp({ streams: { books }, data, plugins: [site] });
    const cover = await app.request('GET', '/books/2/cover');
    expect(cover.status).toBe(200);
    expect(cover.text).toBe('cover of Emma (2)');
    expect((await app.request('POST', '/books/2/cover')).status).toBe(405);
  });

  it('runs route middleware by name', async () => {
    app = await startApp({ streams: { books }, data, plugins: [site] });
    expect((await app.request('GET', '/limited/1')).status).toBe(200);
    expect((await app.request('DELETE', '/limited/1')).status).toBe(405);
  });

  it('answers 501 for a handler no plugin registers, and serves routes of streams created over the API', async () => {
    app = await startApp({ streams: { books }, data, plugins: [site] });
    expect((await app.request('GET', '/nothing/1')).status).toBe(501);
    const created = await app.request('POST', '/api/streams', { id: 'films', fields: { id: 'integer', title: 'string' }, route: '/films/{id}' });
    expect(created.status).toBe(201);
    await app.request('POST', '/api/streams/films/entries', { id: 7, title: 'Alien' });
    const film = await app.request('GET', '/films/7');
    expect(film.text).toBe('<h1 data-view="films.view">Alien</h1>');
  });
});
