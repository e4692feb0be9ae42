import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { FIELDS } from '../../plugins/fields/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { startServer } from '../helpers/server-process.js';

/** Issue #20 item 5: filters and stored values are cast by the field's type everywhere. */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An addon type whose castFilter cannot cast some values (it says so with undefined). */
const levelAddon = definePlugin({
  name: 'level-addon',
  requires: ['fields'],
  register({ use }) {
    use(FIELDS).registerType({
      name: 'level',
      rule: 'level',
      message: 'The :attribute field must be low, mid or high.',
      schema: () => ({ enum: [1, 2, 3] }),
      normalize: (value) => ({ low: 1, mid: 2, high: 3 })[String(value)] ?? value,
      castFilter: (value) => ({ low: 1, mid: 2, high: 3 })[String(value)],
    });
  },
});

describe('filter values', () => {
  it('a dotted filter on a declared nested number matches (where[ob.lat]=1.5)', async () => {
    app = await startApp({
      streams: { places: { fields: { id: 'integer', ob: { type: 'object', config: { properties: { lat: 'decimal', name: 'string' } } } } } },
      data: { places: [{ id: 1, ob: { lat: 1.5, name: 'a' } }, { id: 2, ob: { lat: 2.5, name: 'b' } }] },
    });
    const eq = await app.request('GET', '/api/streams/places/entries?where[ob.lat]=1.5');
    expect(eq.status).toBe(200);
    expect(eq.json.data.map((e: { id: number }) => e.id)).toEqual([1]);
    const gt = await app.request('GET', '/api/streams/places/entries?where[ob.lat]=2&constraint[ob.lat]=>');
    expect(gt.json.data.map((e: { id: number }) => e.id)).toEqual([2]);
    const bad = await app.request('GET', '/api/streams/places/entries?where[ob.lat]=north');
    expect(bad.status).toBe(400);
  });

  it("an addon type's castFilter that cannot cast answers 400, not an empty 200", async () => {
    app = await startApp({
      plugins: [levelAddon],
      streams: { tasks: { fields: { id: 'integer', level: 'level' } } },
      data: { tasks: [{ id: 1, level: 2 }] },
    });
    const ok = await app.request('GET', '/api/streams/tasks/entries?where[level]=mid');
    expect(ok.json.data.map((e: { id: number }) => e.id)).toEqual([1]);
    const bad = await app.request('GET', '/api/streams/tasks/entries?where[level]=extreme');
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].message).toMatch(/filter value for field \[level\]/);
  });
});

describe('hand-written YAML and front matter', () => {
  it('values are cast by their field types on read ("12" -> 12, yes -> true), and what cannot be cast is reported', async () => {
    // The real launcher, so the report can be read from its log.
    const root = await mkdtemp(path.join(os.tmpdir(), 'yaml-cast-'));
    const write = async (relative: string, text: string) => {
      await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
      await writeFile(path.join(root, relative), text);
    };
    await write('app.json', JSON.stringify({ log: { level: 'warn' } }));
    await write('streams/notes.json', JSON.stringify({ config: { source: { type: 'filebase', format: 'md' } }, fields: { id: 'integer', year: 'integer', done: 'boolean', title: 'string', body: 'string' } }));
    await write('streams/data/notes/1.md', '---\nyear: "12"\ndone: yes\ntitle: " 007 "\n---\nHello\n');
    await write('streams/data/notes/2.md', '---\nyear: twelve\ndone: off\n---\nBye\n');
    const running = await startServer(['--config', path.join(root, 'app.json'), '--port', '0']);
    try {
      const get = async (target: string) => (await (await request(`${running.url}${target}`)).body.json()) as { data: never };
      expect((await get('/api/streams/notes/entries/1')).data).toMatchObject({ id: 1, year: 12, done: true, title: ' 007 ' });
      expect(((await get('/api/streams/notes/entries?where[year]=12')).data as Array<{ id: number }>).map((e) => e.id)).toEqual([1]);
      expect((await get('/api/streams/notes/entries/2')).data).toMatchObject({ id: 2, year: 'twelve', done: false });
      const report = running.stdout().split('\n').find((line) => line.includes('do not match their field types'));
      expect(report).toBeDefined();
      expect(JSON.parse(report!)).toMatchObject({ path: path.join(root, 'streams/data/notes/2.md'), problems: ['year: "twelve" is not a valid integer'] });
    } finally {
      running.child.kill('SIGTERM');
      await running.exit;
      await rm(root, { recursive: true, force: true });
    }
  });
});
