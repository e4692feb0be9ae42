import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #13 item 5: sources never lose what they cannot parse. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('what a source cannot serve is kept, or the write refused', () => {
  it('the file source writes back items it skipped (no key, not objects, repeated keys)', async () => {
    app = await startApp({
      streams: { ledger: { config: { source: { type: 'file', format: 'json' } }, fields: { id: 'integer', amount: 'integer' } } },
      files: { 'streams/data/ledger.json': JSON.stringify([{ id: 1, amount: 5 }, { amount: 7 }, 'a note', { id: 1, amount: 9 }]) },
    });
    expect((await app.request('POST', '/api/streams/ledger/entries', { id: 2, amount: 3 })).status).toBe(201);
    const written = JSON.parse(await readFile(path.join(app.root, 'streams/data/ledger.json'), 'utf8')) as unknown[];
    expect(written).toEqual(expect.arrayContaining([{ id: 1, amount: 5 }, { id: 2, amount: 3 }, { amount: 7 }, 'a note', { id: 1, amount: 9 }]));
    expect(written).toHaveLength(5);
    // The first of a repeated key is the one served, and stays first after a write.
    expect((await app.request('GET', '/api/streams/ledger/entries/1')).json.data.amount).toBe(5);
  });

  it('the csv file source keeps rows without a key', async () => {
    app = await startApp({
      streams: { people: { config: { source: { type: 'file', format: 'csv' } }, fields: { id: 'integer', name: 'string' } } },
      files: { 'streams/data/people.csv': 'id,name\n1,Ann\n,"no key"\n' },
    });
    expect((await app.request('POST', '/api/streams/people/entries', { id: 2, name: 'Bo' })).status).toBe(201);
    const text = await readFile(path.join(app.root, 'streams/data/people.csv'), 'utf8');
    expect(text).toContain('no key');
    expect(text).toContain('Bo');
  });

  it('POST of a new stream never overwrites a file holding another stream', async () => {
    app = await startApp({ files: { 'streams/x.json': JSON.stringify({ id: 'y', fields: { id: 'integer' } }) } });
    const res = await app.request('POST', '/api/streams', { id: 'x', fields: { id: 'integer' } });
    expect(res.status).toBe(409);
    expect(res.json.errors[0].message).toMatch(/x\.json holds stream \[y\]/);
    expect(JSON.parse(await readFile(path.join(app.root, 'streams/x.json'), 'utf8')).id).toBe('y');
  });

  it('a key stored in two entry files refuses writes instead of losing them at the next boot', async () => {
    app = await startApp({
      streams: { notes: { fields: { id: 'integer', text: 'string' } } },
      files: { 'streams/data/notes/1.json': '{"id":1,"text":"a"}', 'streams/data/notes/one.json': '{"id":1,"text":"b"}', 'streams/data/notes/2.json': '{"id":2,"text":"c"}' },
    });
    const refused = await app.request('PATCH', '/api/streams/notes/entries/1', { text: 'new' });
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].message).toMatch(/stored in several files \(1\.json, one\.json\)/);
    expect((await app.request('PATCH', '/api/streams/notes/entries/2', { text: 'fine' })).status).toBe(200);
  });

  it('a key in two files is found whatever the names: numbers in numeric order, neither named after the key', async () => {
    app = await startApp({
      streams: { notes: { fields: { id: 'integer', text: 'string' } } },
      files: {
        'streams/data/notes/10.json': '{"id":3,"text":"a"}',
        'streams/data/notes/9.json': '{"id":3,"text":"b"}',
        'streams/data/notes/2.json': '{"id":2,"text":"c"}',
      },
    });
    // 9.json comes before 10.json (numeric order): its version is served.
    expect((await app.request('GET', '/api/streams/notes/entries/3')).json.data.text).toBe('b');
    const refused = await app.request('PATCH', '/api/streams/notes/entries/3', { text: 'new' });
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].message).toMatch(/stored in several files \(9\.json, 10\.json\)/);
    expect((await app.request('PATCH', '/api/streams/notes/entries/2', { text: 'fine' })).status).toBe(200);
  });
});
