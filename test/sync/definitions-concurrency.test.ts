import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * #14 items 3 and 4 for stream definitions: a strong ETag of the stored definition,
 * If-Match on PUT/PATCH/DELETE (412 when stale), and DELETE of a stream other streams
 * name answering 409 with each dependent unless ?force=true.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const streams = {
  planets: { fields: { id: 'integer', name: 'string' } },
  moons: { fields: { id: 'integer', planet: { type: 'relationship', config: { related: 'planets' } }, visits: { type: 'relationship', config: { related: ['planets'], multiple: true } } } },
  dwarfs: { extends: 'planets', fields: { id: 'integer', tiny: 'boolean' } },
};

describe('definitions: optimistic concurrency and referential safety', () => {
  it('PUT, PATCH and DELETE of a definition with a stale If-Match answer 412 and change nothing', async () => {
    app = await startApp({ streams: { planets: streams.planets } });
    const shown = await app.request('GET', '/api/streams/planets');
    const etag = shown.headers.etag!;
    expect(etag).toMatch(/^"/);
    const patched = await app.request('PATCH', '/api/streams/planets', { name: 'Worlds' }, { 'if-match': etag });
    expect(patched.status).toBe(200);
    const fresh = patched.headers.etag!;
    expect(fresh).not.toBe(etag);
    expect((await app.request('GET', '/api/streams/planets')).headers.etag).toBe(fresh);
    for (const [method, body] of [['PUT', { fields: { id: 'integer' } }], ['PATCH', { name: 'Other' }], ['DELETE', undefined]] as const) {
      const stale = await app.request(method, '/api/streams/planets', body, { 'if-match': etag });
      expect(stale.status, method).toBe(412);
      expect(stale.json.errors[0].message).toMatch(/changed/);
    }
    expect((await app.request('GET', '/api/streams/planets')).json.data.name).toBe('Worlds');
    expect((await app.request('PUT', '/api/streams/comets', { fields: { id: 'integer' } }, { 'if-match': '*' })).status).toBe(412);
    expect((await app.request('PUT', '/api/streams/planets', { fields: { id: 'integer' } }, { 'if-none-match': '*' })).status).toBe(412);
    expect((await app.request('DELETE', '/api/streams/planets', undefined, { 'if-match': fresh })).status).toBe(204);
  });

  it('DELETE of a stream others relate to or extend answers 409 naming each dependent; ?force=true past relationships, never past children', async () => {
    app = await startApp({ streams, data: { planets: [{ id: 1, name: 'Earth' }], moons: [{ id: 1, planet: 1, visits: [1] }] } });
    const refused = await app.request('DELETE', '/api/streams/planets');
    expect(refused.status).toBe(409);
    const named = refused.json.errors.map((e: { meta: { field: string } }) => e.meta.field).sort();
    expect(named).toEqual(['dwarfs.extends', 'moons.planet', 'moons.visits']);
    expect(existsSync(path.join(app.root, 'streams/planets.json'))).toBe(true);

    // A stale If-Match is a 412 even where the dependents would refuse the delete: the
    // precondition is evaluated first (it was a 409).
    const tag = (await app.request('GET', '/api/streams/planets')).headers.etag!;
    expect((await app.request('PATCH', '/api/streams/planets', { name: 'Worlds' })).status).toBe(200);
    const stale = await app.request('DELETE', '/api/streams/planets?force=true', undefined, { 'if-match': tag });
    expect(stale.status).toBe(412);
    expect(stale.json.errors[0].message).toMatch(/changed/);

    // A child that extends it could not be built at the next boot: never forced.
    const child = await app.request('DELETE', '/api/streams/planets?force=true');
    expect(child.status).toBe(409);
    expect(child.json.errors.map((e: { meta: { field: string } }) => e.meta.field)).toEqual(['dwarfs.extends']);
    expect((await app.request('DELETE', '/api/streams/dwarfs')).status).toBe(204);
    expect((await app.request('DELETE', '/api/streams/planets?force=true')).status).toBe(204);
    expect(existsSync(path.join(app.root, 'streams/planets.json'))).toBe(false);
    // Dependents keep their raw values; their links to the deleted stream are omitted.
    const moon = await app.request('GET', '/api/streams/moons/entries/1');
    expect(moon.status).toBe(200);
    expect(moon.json.data).toMatchObject({ id: 1, planet: 1, visits: [1] });
    expect(moon.json.links.planet).toBeUndefined();
    expect(moon.json.links.visits).toBeUndefined();
  });
});
