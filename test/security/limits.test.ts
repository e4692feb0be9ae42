import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #13 item 6: named limits with a clear 4xx, and files saved with a BOM. */
describe('limits', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams: { things: { fields: { id: 'integer', tags: { type: 'relationship', config: { related: 'things', multiple: true } } } } },
      files: {
        'streams/notes.json': '\ufeff{"fields":{"id":"integer","title":"string"}}',
        'streams/data/notes/1.json': '\ufeff{"id":1,"title":"saved with a BOM"}',
      },
    });
  });
  afterAll(() => app.close());

  it('integer keys past 2^53 and -0 are refused, never rounded', async () => {
    for (const id of ['9007199254740993', '-0']) {
      const res = await app.request('POST', '/api/streams/things/entries', `{"id":${id}}`, { 'content-type': 'application/json' });
      expect(res.status, id).toBe(409);
      expect(res.json.errors[0]).toEqual({ message: 'The id field is not an exact integer.', meta: { field: 'id', rule: 'integer' } });
    }
    expect((await app.request('PUT', '/api/streams/things/entries/9007199254740993', {})).status).toBe(409);
    expect((await app.request('GET', '/api/streams/things/entries')).json.meta.total).toBe(0);
  });

  it('keys longer than 255 characters are a 400', async () => {
    const res = await app.request('GET', `/api/streams/notes/entries/${'k'.repeat(300)}`);
    expect([400, 404]).toContain(res.status);
    const put = await app.request('PUT', `/api/streams/notes/entries/${'k'.repeat(300)}`, { title: 'x' });
    expect(put.status).toBe(400);
  });

  it('at most 1000 attributes per entry', async () => {
    const body = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`a${i}`, i]));
    const res = await app.request('POST', '/api/streams/notes/entries', body);
    expect(res.status).toBe(400);
    expect(res.json.errors[0].message).toMatch(/at most 1000 attributes/);
  });

  it('a multiple relationship holds at most 1000 keys (130k was a stack overflow and a 500)', async () => {
    const res = await app.request('POST', '/api/streams/things/entries', { tags: Array.from({ length: 130_000 }, (_, i) => i) });
    expect(res.status).toBe(409);
    expect(res.json.errors[0].meta).toEqual({ field: 'tags', rule: 'relationship' });
  });

  it('names every object has are refused as field handles and key names', async () => {
    for (const handle of ['__proto__', 'constructor', 'toString', 'valueOf']) {
      const fields = await app.request('POST', '/api/streams', `{"id":"bad","fields":{"${handle}":"string"}}`, { 'content-type': 'application/json' });
      expect([400, 409], handle).toContain(fields.status);
      const key = await app.request('POST', '/api/streams', { id: 'bad', config: { key_name: handle }, fields: { id: 'string' } });
      expect(key.status, handle).toBe(409);
    }
  });

  it('a definition and an entry file starting with a UTF-8 BOM are read, not skipped', async () => {
    const res = await app.request('GET', '/api/streams/notes/entries/1');
    expect(res.status).toBe(200);
    expect(res.json.data.title).toBe('saved with a BOM');
  });
});
