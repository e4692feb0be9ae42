import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** #14 item 6: a boot followed by reads leaves every file byte-identical with its mtime. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

function snapshot(root: string): Map<string, { bytes: string; mtimeMs: number }> {
  const out = new Map<string, { bytes: string; mtimeMs: number }>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out.set(path.relative(root, full), { bytes: readFileSync(full, 'base64'), mtimeMs: statSync(full).mtimeMs });
    }
  };
  walk(root);
  return out;
}

describe('reads and boot write nothing', () => {
  it('every source type: files keep their bytes and mtime after boot and reads', async () => {
    const fields = { id: 'integer', name: 'string', planet: { type: 'relationship', config: { related: 'planets' } } };
    app = await startApp({
      streams: {
        planets: { fields: { id: 'integer', name: 'string' } },
        moons: { fields },
        rows: { fields: { id: 'integer', name: 'string' }, config: { source: { type: 'file', format: 'csv', file: 'rows.csv' } } },
        list: { fields: { id: 'integer', name: 'string' }, config: { source: { type: 'file', file: 'list.json' } } },
        inline: { fields: { id: 'integer', name: 'string' }, config: { source: { type: 'self' } }, data: { 1: { name: 'a' }, 2: { name: 'b' } } },
      },
      data: { planets: [{ id: 1, name: 'Earth' }], moons: [{ id: 1, name: 'Moon', planet: 1 }] },
      // Odd but valid formatting: a rewrite would normalize it.
      files: { 'rows.csv': 'id,name\n1,x\n2,y\n', 'list.json': '[ {"id": 1, "name": "x"},\n  {"id": 2, "name": "y"} ]' },
    });
    // Boot rewrote nothing: the files are exactly what was written before it.
    const text = (relative: string): string => readFileSync(path.join(app!.root, relative), 'utf8');
    expect(text('rows.csv')).toBe('id,name\n1,x\n2,y\n');
    expect(text('list.json')).toBe('[ {"id": 1, "name": "x"},\n  {"id": 2, "name": "y"} ]');
    expect(JSON.parse(text('streams/inline.json')).data).toEqual({ 1: { name: 'a' }, 2: { name: 'b' } });
    // Then reads must not move a byte or an mtime.
    const before = snapshot(app.root);
    for (const stream of ['planets', 'moons', 'rows', 'list', 'inline']) {
      expect((await app.request('GET', `/api/streams/${stream}/entries?with=`)).status).not.toBe(500);
      const shown = await app.request("GET", `/api/streams/${stream}/entries/1`);
      expect(shown.status, `${stream} ${shown.text}`).toBe(200);
      expect((await app.request('GET', `/api/streams/${stream}`)).status).toBe(200);
    }
    expect((await app.request('GET', '/api/streams/moons/entries?with=planet')).status).toBe(200);
    expect((await app.request('GET', '/api/streams')).status).toBe(200);
    // A write precondition that fails reads and writes nothing either.
    expect((await app.request('PATCH', '/api/streams/list/entries/1', { name: 'z' }, { 'if-match': '"stale"' })).status).toBe(412);
    expect((await app.request('PATCH', '/api/streams/inline/entries/1', { name: 'z' }, { 'if-match': '"stale"' })).status).toBe(412);
    const after = snapshot(app.root);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [file, state] of before) expect(after.get(file), file).toEqual(state);
  });
});
