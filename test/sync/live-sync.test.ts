import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, type Plugin } from '../../kernel/index.js';
import type { EntryHookPayload } from '../../plugins/entries/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Issue #14 item 1: live sync. Against a real server with real files in a temporary
 * folder: an edit, addition or removal made on disk is served within the issue's 2 s
 * (tests wait up to 3 s, polling), for every source and format and for definitions; the
 * server's own writes come back as no change; an invalid edit keeps the last good version
 * and is listed in /readyz while the node stays ready.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});


/** Write the way editors save: a temporary file renamed over the original. */
function saveAtomically(file: string, text: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  writeFileSync(temp, text);
  renameSync(temp, file);
}

/** Records every `*ed` entry hook with its origin. */
function recorder(): { plugin: Plugin; seen: Array<{ hook: string; key: unknown; origin?: string }> } {
  const seen: Array<{ hook: string; key: unknown; origin?: string }> = [];
  const plugin = definePlugin({
    name: 'hook-recorder',
    register({ hooks }) {
      for (const hook of ['entry.created', 'entry.updated', 'entry.deleted'] as const) {
        hooks.on(hook, (payload: EntryHookPayload) => void seen.push({ hook, key: payload.key, origin: payload.origin }));
      }
    },
  });
  return { plugin, seen };
}

const fields = { id: 'integer', name: 'string', size: 'integer' };

interface SourceCase {
  name: string;
  /** Start the app with entries 1 (one) and 2 (two). */
  boot(plugins: Plugin[]): Promise<TestApp>;
  /** Write the stream's entries as a hand edit would (whole set). */
  write(app: TestApp, rows: Array<{ id: number; name: string; size: number }>): void;
  /** Write text that cannot be parsed where the entries are. */
  corrupt(app: TestApp): string;
}

const rows = [
  { id: 1, name: 'one', size: 1 },
  { id: 2, name: 'two', size: 2 },
];

function filebase(format: 'json' | 'yaml' | 'md'): SourceCase {
  const ext = format;
  const text = (row: { id: number; name: string; size: number }): string =>
    format === 'json' ? `${JSON.stringify(row, null, 2)}\n` : format === 'yaml' ? `id: ${row.id}\nname: ${row.name}\nsize: ${row.size}\n` : `---\nid: ${row.id}\nname: ${row.name}\nsize: ${row.size}\n---\n`;
  const folder = (app: TestApp): string => path.join(app.root, 'streams/data/things');
  const bodyField = format === 'md' ? { body: 'string' } : {};
  return {
    name: `filebase ${format}`,
    boot: (plugins) =>
      startApp({
        streams: { things: { fields: { ...fields, ...bodyField }, config: { source: { type: 'filebase', format } } } },
        files: Object.fromEntries(rows.map((r) => [`streams/data/things/${r.id}.${ext}`, text(r)])),
        plugins,
      }),
    write(app, next) {
      const keep = new Set(next.map((r) => `${r.id}.${ext}`));
      for (const row of next) saveAtomically(path.join(folder(app), `${row.id}.${ext}`), text(row));
      for (const r of rows.concat([{ id: 3, name: '', size: 0 }])) if (!keep.has(`${r.id}.${ext}`)) rmSync(path.join(folder(app), `${r.id}.${ext}`), { force: true });
    },
    corrupt(app) {
      const file = path.join(folder(app), `1.${ext}`);
      writeFileSync(file, format === 'json' ? '{"id": 1, "name": ' : format === 'yaml' ? 'id: [1\nname: x: y: z\n' : '---\nid: [1\n---\n');
      return file;
    },
  };
}

function fileSource(format: 'json' | 'csv'): SourceCase {
  const encode = (list: typeof rows): string => (format === 'json' ? `${JSON.stringify(list, null, 2)}\n` : `id,name,size\n${list.map((r) => `${r.id},${r.name},${r.size}`).join('\n')}\n`);
  return {
    name: `file ${format}`,
    boot: (plugins) =>
      startApp({
        streams: { things: { fields, config: { source: { type: 'file', file: `things.${format}`, format } } } },
        files: { [`things.${format}`]: encode(rows) },
        plugins,
      }),
    write: (app, next) => saveAtomically(path.join(app.root, `things.${format}`), encode(next)),
    corrupt(app) {
      const file = path.join(app.root, `things.${format}`);
      writeFileSync(file, format === 'json' ? '[{"id": 1,' : 'id,name,size\n1,"unterminated\n');
      return file;
    },
  };
}

const selfSource: SourceCase = {
  name: 'self',
  boot: (plugins) => startApp({ streams: { things: { fields, config: { source: { type: 'self' } }, data: rows } }, plugins }),
  write(app, next) {
    const file = path.join(app.root, 'streams/things.json');
    saveAtomically(file, `${JSON.stringify({ fields, config: { source: { type: 'self' } }, data: next }, null, 2)}\n`);
  },
  corrupt(app) {
    const file = path.join(app.root, 'streams/things.json');
    writeFileSync(file, '{"fields": ');
    return file;
  },
};

const E = '/api/streams/things/entries';

describe('live sync of a filebase folder removed and created again', () => {
  // The folder itself goes away (a checkout, a restore): every entry is compared with what the
  // listing holds (`FilebaseStore.rescan`), without touching a temp file that may be a write in flight.
  it('serves nothing while the folder is gone, then what the new folder holds; a temp file there is left alone', async () => {
    app = await filebase('json').boot([]);
    const folder = path.join(app.root, 'streams/data/things');
    expect((await app.request('GET', E)).json.data.map((e: { id: number }) => e.id)).toEqual([1, 2]);
    rmSync(folder, { recursive: true, force: true });
    await eventually(async () => expect((await app!.request('GET', E)).json.data).toEqual([]));
    const moved = `${folder}.next`;
    rmSync(moved, { recursive: true, force: true });
    mkdirSync(moved);
    writeFileSync(path.join(moved, '2.json'), `${JSON.stringify({ id: 2, name: 'deux', size: 2 })}\n`);
    writeFileSync(path.join(moved, '5.json'), `${JSON.stringify({ id: 5, name: 'five', size: 5 })}\n`);
    const temp = path.join(moved, '.5.json.0a1b2c3d.tmp');
    writeFileSync(temp, 'a write in flight');
    renameSync(moved, folder);
    await eventually(async () => expect((await app!.request('GET', E)).json.data.map((e: { id: number; name: string }) => `${e.id} ${e.name}`)).toEqual(['2 deux', '5 five']), 8000);
    expect(existsSync(path.join(folder, '.5.json.0a1b2c3d.tmp'))).toBe(true);
  });
});

describe.each<SourceCase>([filebase('json'), filebase('yaml'), filebase('md'), fileSource('json'), fileSource('csv'), selfSource])('live sync of entries: $name', (source) => {
  it('serves an edit, an addition and a removal made on disk, each announced once with origin disk', async () => {
    const { plugin, seen } = recorder();
    app = await source.boot([plugin]);
    expect((await app.request('GET', `${E}/1`)).json.data.name).toBe('one');

    source.write(app, [{ id: 1, name: 'uno', size: 1 }, rows[1]!]);
    await eventually(async () => expect((await app!.request('GET', `${E}/1`)).json.data.name).toBe('uno'));

    source.write(app, [{ id: 1, name: 'uno', size: 1 }, rows[1]!, { id: 3, name: 'three', size: 3 }]);
    await eventually(async () => expect((await app!.request('GET', `${E}/3`)).json.data).toMatchObject({ id: 3, name: 'three', size: 3 }));
    expect((await app.request('GET', E)).json.data.map((e: { id: number }) => e.id)).toEqual([1, 2, 3]);

    source.write(app, [{ id: 1, name: 'uno', size: 1 }, { id: 3, name: 'three', size: 3 }]);
    await eventually(async () => expect((await app!.request('GET', `${E}/2`)).status).toBe(404));

    await new Promise((r) => setTimeout(r, 200));
    const disk = seen.filter((s) => s.origin === 'disk').map((s) => `${s.hook} ${String(s.key)}`);
    expect(disk).toEqual(['entry.updated 1', 'entry.created 3', 'entry.deleted 2']);
  });

  it("recognizes its own writes: an API write is announced once, with origin api, and never re-read as a disk change", async () => {
    const { plugin, seen } = recorder();
    app = await source.boot([plugin]);
    expect((await app.request('PATCH', `${E}/1`, { name: 'patched' })).status).toBe(200);
    expect((await app.request('POST', E, { id: 5, name: 'five', size: 5 })).status).toBe(201);
    expect((await app.request('DELETE', `${E}/2`)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 400));
    expect(seen.map((s) => `${s.hook} ${String(s.key)} ${s.origin}`)).toEqual(['entry.updated 1 api', 'entry.created 5 api', 'entry.deleted 2 api']);
    expect((await app.request('GET', `${E}/1`)).json.data.name).toBe('patched');
  });

  it('keeps the last good version of an edit that cannot be read, lists it in /readyz, and serves the fix', async () => {
    app = await source.boot([]);
    expect((await app.request('GET', `${E}/1`)).json.data.name).toBe('one');
    const file = source.corrupt(app);
    await eventually(async () => {
      const ready = await app!.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(JSON.stringify(ready.json.details?.streams?.degraded ?? [])).toContain(JSON.stringify(file).slice(1, -1));
    });
    expect((await app.request('GET', `${E}/1`)).json.data.name).toBe('one');
    source.write(app, [{ id: 1, name: 'fixed', size: 1 }, rows[1]!]);
    await eventually(async () => expect((await app!.request('GET', `${E}/1`)).json.data.name).toBe('fixed'));
    await eventually(async () => expect((await app!.request('GET', '/readyz')).json.details?.streams?.degraded).toBeUndefined());
  });
});

describe('live sync of definitions', () => {
  const things = { fields: { id: 'integer', name: 'string' } };

  it('serves a definition added, changed and removed on disk', async () => {
    app = await startApp({ streams: { things }, data: { things: [{ id: 1, name: 'one' }] } });
    const folder = path.join(app.root, 'streams');
    saveAtomically(path.join(folder, 'extra.json'), JSON.stringify({ fields: { id: 'integer', label: 'string' } }));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/extra')).status).toBe(200));
    expect((await app.request('POST', '/api/streams/extra/entries', { id: 1, label: 'x' })).status).toBe(201);

    saveAtomically(path.join(folder, 'things.json'), JSON.stringify({ name: 'Renamed things', fields: { id: 'integer', name: 'string', size: 'integer' } }));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/things')).json.data.name).toBe('Renamed things'));
    // The new field is validated at once; the entries were kept.
    expect((await app.request('PATCH', '/api/streams/things/entries/1', { size: 'big' })).status).toBe(409);
    expect((await app.request('GET', '/api/streams/things/entries/1')).json.data.name).toBe('one');

    rmSync(path.join(folder, 'extra.json'));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/extra')).status).toBe(404));
  });

  it('keeps the last good definition of an invalid edit, reports it in /readyz (still ready) and serves the fix', async () => {
    app = await startApp({ streams: { things }, data: { things: [{ id: 1, name: 'one' }] } });
    const file = path.join(app.root, 'streams/things.json');
    writeFileSync(file, '{"fields": {"id": "integer",');
    await eventually(async () => {
      const ready = await app!.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.json.details.streams.degraded).toEqual([expect.objectContaining({ stream: 'things', file, reason: expect.stringMatching(/not valid JSON/) })]);
    });
    expect((await app.request('GET', '/api/streams/things/entries/1')).json.data.name).toBe('one');

    writeFileSync(file, JSON.stringify({ fields: { id: 'integer', name: 'no-such-type' } }));
    await eventually(async () => expect(JSON.stringify((await app!.request('GET', '/readyz')).json.details.streams.degraded)).toMatch(/\/fields\/name/));
    expect((await app.request('GET', '/api/streams/things')).status).toBe(200);

    writeFileSync(file, JSON.stringify({ name: 'Fixed', fields: { id: 'integer', name: 'string' } }));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/things')).json.data.name).toBe('Fixed'));
    expect((await app.request('GET', '/readyz')).json.details).toBeUndefined();
  });

  it('rebuilds a definition when a file it imports changes, and children when their parent changes', async () => {
    const changes: string[] = [];
    const plugin = definePlugin({ name: 'changes', register: ({ hooks }) => void hooks.on('definition.changed', ({ id, action }) => void changes.push(`${action} ${id}`)) });
    app = await startApp({
      streams: {
        base: { fields: '@fields/base.json' },
        child: { extends: 'base', fields: { extra: 'string' } },
      },
      files: { 'fields/base.json': { id: 'integer', title: 'string' } },
      plugins: [plugin],
    });
    expect((await app.request('POST', '/api/streams/base/entries', { id: 1, year: 'soon' })).status).toBe(201);
    saveAtomically(path.join(app.root, 'fields/base.json'), JSON.stringify({ id: 'integer', title: 'string', year: 'integer' }));
    await eventually(async () => expect((await app!.request('POST', '/api/streams/base/entries', { id: 2, year: 'soon' })).status).toBe(409));
    // The child was rebuilt on its new parent: it validates the inherited field now.
    await eventually(async () => expect(changes).toEqual(['updated base', 'updated child']));
    expect((await app.request('POST', '/api/streams/child/entries', { id: 1, year: 'soon' })).status).toBe(409);
  });

  it('recognizes its own definition writes (no reload, no change event beyond the API one)', async () => {
    const changes: string[] = [];
    const plugin = definePlugin({ name: 'changes', register: ({ hooks }) => void hooks.on('definition.changed', ({ id, action }) => void changes.push(`${action} ${id}`)) });
    app = await startApp({ streams: { things }, plugins: [plugin] });
    expect((await app.request('PATCH', '/api/streams/things', { name: 'Patched' })).status).toBe(200);
    expect((await app.request('POST', '/api/streams', { id: 'more', fields: { id: 'integer' } })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 400));
    expect(changes).toEqual(['updated things', 'created more']);
  });
});

describe('dangling references at boot (item 4)', () => {
  it('boots when a parent or a related stream was deleted by hand, serves the rest, and reports it in /readyz', async () => {
    app = await startApp({
      streams: {
        films: { fields: { id: 'integer', title: 'string', director: { type: 'relationship', config: { related: 'people' } } } },
        shorts: { extends: 'movies', fields: { minutes: 'integer' } },
      },
      data: { films: [{ id: 1, title: 'Alien', director: 7 }] },
    });
    expect((await app.request('GET', '/api/streams/films/entries/1')).json.data).toMatchObject({ id: 1, title: 'Alien', director: 7 });
    expect((await app.request('GET', '/api/streams/shorts')).status).toBe(404);
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json.details.streams.unserved).toEqual([expect.objectContaining({ stream: 'shorts', reason: expect.stringContaining('[movies]') })]);
    expect(ready.json.details.streams.warnings).toEqual([expect.objectContaining({ stream: 'films', field: 'director' })]);

    // The parent comes back: the waiting child is served.
    writeFileSync(path.join(app.root, 'streams/movies.json'), JSON.stringify({ fields: { id: 'integer', title: 'string' } }));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/shorts')).status).toBe(200));
    expect((await app.request('GET', '/readyz')).json.details.streams.unserved).toBeUndefined();
  });
});

describe('streams.watch: false', () => {
  it('reads files at boot and before writes only', async () => {
    app = await startApp({ streams: { things: { fields } }, data: { things: rows }, config: { streams: { watch: false } } });
    expect((await app.request('GET', `${E}/1`)).json.data.name).toBe('one');
    saveAtomically(path.join(app.root, 'streams/data/things/1.json'), JSON.stringify({ id: 1, name: 'edited', size: 1 }));
    saveAtomically(path.join(app.root, 'streams/extra.json'), JSON.stringify({ fields: { id: 'integer' } }));
    await new Promise((r) => setTimeout(r, 600));
    expect((await app.request('GET', `${E}/1`)).json.data.name).toBe('one');
    expect((await app.request('GET', '/api/streams/extra')).status).toBe(404);
    // A write still starts from the file as it is now (item 2 holds without watching).
    expect((await app.request('PATCH', `${E}/1`, { size: 10 })).json.data).toEqual({ id: 1, name: 'edited', size: 10 });
  });
});
