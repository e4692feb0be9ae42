import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Discrepancies found by the black-box acceptance probe, each pinned here. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const films = { fields: { id: 'integer', title: 'string', year: 'integer', secret: { type: 'string', protected: true } } };
const data = {
  films: [
    { id: 1, title: 'Star Wars', year: 1977, secret: 'hunter2' },
    { id: 2, title: 'Empire', year: 1980 },
    { id: 4, title: 'Matrix', year: 1999 },
    { id: 5, title: 'Alien' },
  ],
};
const ids = (res: { json: { data: Array<{ id: unknown }> } }): unknown[] => res.json.data.map((e) => e.id);

describe('acceptance fixes', () => {
  it('orderBy[] and order_by[] mixed sort in the order they appear', async () => {
    app = await startApp({ streams: { films }, data });
    expect(ids(await app.request('GET', '/api/streams/films/entries?order_by[year]=desc&orderBy[title]=asc'))).toEqual([4, 2, 1, 5]);
    expect(ids(await app.request('GET', '/api/streams/films/entries?orderBy[title]=asc&order_by[year]=desc'))).toEqual([5, 2, 4, 1]);
  });

  it('a declared integer key reads /entries/04 as 4', async () => {
    app = await startApp({ streams: { films }, data });
    expect((await app.request('GET', '/api/streams/films/entries/04')).json.data.title).toBe('Matrix');
  });

  it('a uuid key names one entry whatever its case', async () => {
    app = await startApp({ streams: { things: { fields: { id: { type: 'uuid', config: { default: true } }, n: 'integer' } } } });
    const created = await app.request('POST', '/api/streams/things/entries', { n: 1 });
    const id = created.json.data.id as string;
    const upper = await app.request('PUT', `/api/streams/things/entries/${id.toUpperCase()}`, { n: 2 });
    expect(upper.status).toBe(200);
    expect(upper.json.data).toEqual({ id, n: 2 });
    const given = await app.request('POST', '/api/streams/things/entries', { id: 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE', n: 3 });
    expect(given.json.data.id).toBe('aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee');
    expect((await app.request('GET', '/api/streams/things/entries/aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee')).status).toBe(200);
    expect(readdirSync(path.join(app.root, 'streams', 'data', 'things')).filter((name) => !name.startsWith('.')).sort()).toEqual([`${id}.json`, 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee.json'].sort());
  });

  it('meta.stream of the stream endpoints is core.streams whatever streams_id is', async () => {
    app = await startApp({ streams: { films }, config: { streams: { streams_id: 'defs' } } });
    expect((await app.request('GET', '/api/streams/films')).json.meta.stream).toBe('core.streams');
    expect((await app.request('GET', '/api/streams')).json.meta.stream).toBe('core.streams');
  });

  it('a protected field cannot be used to filter or sort (it would leak its value)', async () => {
    app = await startApp({ streams: { films }, data });
    const probe = await app.request('GET', '/api/streams/films/entries?where[secret]=h%25&constraint[secret]=LIKE');
    expect(probe.status).toBe(400);
    expect(probe.json.errors[0].meta).toEqual({ field: 'secret', rule: 'protected' });
    expect((await app.request('GET', '/api/streams/films/entries?orderBy[secret]=asc')).status).toBe(400);
    const query = await app.request('POST', '/api/streams/films/query', { parameters: [{ where: ['secret', 'hunter2'] }] });
    expect(query.status).toBe(400);
  });
});
