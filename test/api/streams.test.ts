import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

const streams = {
  planets: { name: 'Planets', description: 'Worlds', fields: { id: 'integer', name: 'string' } },
  films: { name: 'Films', fields: { id: 'integer', title: 'string' } },
  people: { name: 'People', fields: { id: 'integer', name: 'string' } },
};

describe('stream-definition endpoints over HTTP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ streams, data: { planets: [{ id: 1, name: 'Hoth' }] } });
  });
  afterAll(async () => app?.close());

  it('GET /api/streams lists definitions with pagination meta (meta.stream core.streams)', async () => {
    const res = await app.request('GET', '/api/streams?per_page=2');
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: { id: string }) => d.id)).toEqual(['films', 'people']);
    expect(res.json.meta).toMatchObject({ stream: 'core.streams', total: 3, per_page: 2, last_page: 2, current_page: 1 });
    expect(res.json.links.next_page).toBe(`${app.url}/api/streams?per_page=2&page=2`);
    expect(res.headers.etag).toBeDefined();
  });

  it('GET /api/streams takes an optional JSON body of parameters (where, order_by)', async () => {
    const res = await app.request('GET', '/api/streams', { parameters: [{ where: ['name', 'LIKE', 'p%'] }, { order_by: ['id', 'desc'] }] });
    expect(res.status).toBe(200);
    expect(res.json.data.map((d: { id: string }) => d.id)).toEqual(['planets', 'people']);
    const bad = await app.request('GET', '/api/streams', { parameters: [{ where: ['name', 'SOUNDS LIKE', 'x'] }] });
    expect(bad.status).toBe(400);
  });

  it('GET /api/streams/{stream} shows one definition', async () => {
    const res = await app.request('GET', '/api/streams/planets');
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: 'planets', name: 'Planets', description: 'Worlds' });
    expect(res.json.meta).toEqual({ parameters: { stream: 'planets' }, stream: 'core.streams' });
    expect(res.json.links).toEqual({
      self: `${app.url}/api/streams/planets`,
      streams: `${app.url}/api/streams`,
      stream: `${app.url}/api/streams/planets`,
      entries: `${app.url}/api/streams/planets/entries`,
    });
  });

  it('POST /api/streams creates a definition file, usable at once (201, location)', async () => {
    const res = await app.request('POST', '/api/streams', { id: 'starships', name: 'Starships', fields: { id: 'integer', model: 'string' } });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({ id: 'starships', name: 'Starships' });
    expect(res.json.links.location).toBe(`${app.url}/api/streams/starships`);
    expect(res.json.meta.payload).toMatchObject({ id: 'starships' });
    expect(existsSync(path.join(app.root, 'streams/starships.json'))).toBe(true);
    const entry = await app.request('POST', '/api/streams/starships/entries', { id: 1, model: 'T-65' });
    expect(entry.status).toBe(201);
    const duplicate = await app.request('POST', '/api/streams', { id: 'starships', name: 'Again' });
    expect(duplicate.status).toBe(409);
  });

  it('answers 409 for an invalid definition and writes nothing', async () => {
    const res = await app.request('POST', '/api/streams', { id: 'bad', name: 'x'.repeat(51) });
    expect(res.status).toBe(409);
    expect(res.json.data).toBeNull();
    expect(existsSync(path.join(app.root, 'streams/bad.json'))).toBe(false);
    const badId = await app.request('PUT', '/api/streams/..%2Fescape', { name: 'Escape' });
    expect(badId.status).toBe(409);
    expect(existsSync(path.join(app.root, 'escape.json'))).toBe(false);
  });

  it('PUT replaces (200) or creates (201); PATCH merges (200) or creates (201)', async () => {
    const put = await app.request('PUT', '/api/streams/films', { name: 'Movies', fields: { id: 'integer' } });
    expect(put.status).toBe(200);
    expect(put.json.data).toMatchObject({ id: 'films', name: 'Movies' });
    const created = await app.request('PUT', '/api/streams/vehicles', { name: 'Vehicles' });
    expect(created.status).toBe(201);
    expect(created.json.links.location).toBe(`${app.url}/api/streams/vehicles`);
    const patch = await app.request('PATCH', '/api/streams/planets', { description: 'Round things' });
    expect(patch.status).toBe(200);
    expect(patch.json.data).toMatchObject({ id: 'planets', name: 'Planets', description: 'Round things' });
    const onDisk = JSON.parse(readFileSync(path.join(app.root, 'streams/planets.json'), 'utf8'));
    expect(onDisk.description).toBe('Round things');
    const patchNew = await app.request('PATCH', '/api/streams/species', { name: 'Species' });
    expect(patchNew.status).toBe(201);
  });

  it('DELETE removes the definition only (204), entries stay on disk', async () => {
    const res = await app.request('DELETE', '/api/streams/planets');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(existsSync(path.join(app.root, 'streams/planets.json'))).toBe(false);
    expect(existsSync(path.join(app.root, 'streams/data/planets/1.json'))).toBe(true);
    expect((await app.request('GET', '/api/streams/planets')).status).toBe(404);
    expect((await app.request('GET', '/api/streams/planets/entries')).status).toBe(404);
    expect((await app.request('DELETE', '/api/streams/planets')).status).toBe(404);
  });
});
