import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * A `self` stream keeps its entries in its own definition file, which the definition
 * endpoints write too. Found in review: a PATCH of the definition rewrote the file with
 * the data it had at load, losing acknowledged entries.
 */
const inline = { config: { source: { type: 'self' } }, fields: { id: 'integer', title: 'string' }, data: [{ id: 1, title: 'one' }] };

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const stored = (root: string): { name?: string; data: Array<{ title: string }> } =>
  JSON.parse(readFileSync(path.join(root, 'streams', 'inline.json'), 'utf8')) as { name?: string; data: Array<{ title: string }> };

describe('self stream entries and definition writes', () => {
  it('a definition PATCH keeps the entries written before it', async () => {
    app = await startApp({ streams: { inline } });
    expect((await app.request('POST', '/api/streams/inline/entries', { title: 'two' })).status).toBe(201);
    expect((await app.request('POST', '/api/streams/inline/entries', { title: 'three' })).status).toBe(201);
    expect((await app.request('PATCH', '/api/streams/inline', { name: 'Inline renamed' })).status).toBe(200);
    const file = stored(app.root);
    expect(file.name).toBe('Inline renamed');
    expect(file.data.map((e) => e.title)).toEqual(['one', 'two', 'three']);
    expect((await app.request('GET', '/api/streams/inline/entries')).json.meta.total).toBe(3);
  });

  it('interleaved entry writes and definition PATCHes all survive', async () => {
    app = await startApp({ streams: { inline } });
    const writes: Array<Promise<{ status: number }>> = [];
    for (let i = 0; i < 8; i++) {
      writes.push(app.request('POST', '/api/streams/inline/entries', { title: `t${i}` }));
      writes.push(app.request('PATCH', '/api/streams/inline', { description: `d${i}` }));
    }
    const statuses = (await Promise.all(writes)).map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(8);
    const file = stored(app.root);
    expect(file.data).toHaveLength(9);
    expect((await app.request('GET', '/api/streams/inline/entries')).json.meta.total).toBe(9);
  });

  it('an entry write after the stream was deleted does not bring the definition back', async () => {
    app = await startApp({ streams: { inline } });
    expect((await app.request('DELETE', '/api/streams/inline')).status).toBe(204);
    const late = await app.request('POST', '/api/streams/inline/entries', { title: 'late' });
    expect(late.status).toBe(404);
    expect(() => stored(app!.root)).toThrow(/ENOENT/);
  });
});
