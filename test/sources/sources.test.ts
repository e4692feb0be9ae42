import { existsSync, renameSync, statSync, utimesSync, watch, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Hooks } from '../../kernel/index.js';
import { createSourceRegistry, likeToRegExp, normalizeWhere, type Source } from '../../plugins/sources/index.js';
import { field, makeDefinition } from './definitions.js';
import { configFor, silentLogger, tempRoot } from './harness.js';

const roots: string[] = [];
const opened: Source[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close().catch(() => undefined);
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function app() {
  const root = await tempRoot();
  roots.push(root);
  const warnings: Array<Record<string, unknown>> = [];
  const logger = Object.assign(Object.create(silentLogger) as typeof silentLogger, {
    warn: (obj: Record<string, unknown>) => void warnings.push(obj),
    error: (obj: Record<string, unknown>) => void warnings.push(obj),
    child: () => logger,
  });
  const registry = createSourceRegistry(configFor(root), root, logger);
  const open = (definition: ReturnType<typeof makeDefinition>): Source => {
    const s = registry.for(definition);
    opened.push(s);
    return s;
  };
  return { root, registry, open, warnings, data: path.join(root, 'streams/data') };
}

describe('filebase formats and PHP files', () => {
  it('reads PHP files: key from the file name, a key field inside wins; corrupt files are logged and skipped', async () => {
    const { open, data, warnings } = await app();
    const folder = path.join(data, 'films');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, '1.json'), JSON.stringify({ title: 'one' }));
    await writeFile(path.join(folder, 'legacy-name.json'), JSON.stringify({ id: 7, title: 'seven' }));
    await writeFile(path.join(folder, 'broken.json'), '{"title": ');
    await writeFile(path.join(folder, 'list.json'), '[1, 2]');
    await writeFile(path.join(folder, '.1.json.abc123.tmp'), '{"half');
    await writeFile(path.join(folder, 'notes.txt'), 'ignored');
    const source = open(makeDefinition('films'));
    expect(await source.get(1)).toMatchObject({ id: 1, title: 'one' });
    expect(await source.get(7)).toMatchObject({ id: 7, title: 'seven' });
    expect(await source.count([])).toBe(2);
    expect(warnings.map((w) => w.path)).toEqual(expect.arrayContaining([path.join(folder, 'broken.json'), path.join(folder, 'list.json')]));
    // The leftover temp file of an interrupted write is removed at load.
    expect(await readdir(folder)).not.toContain('.1.json.abc123.tmp');
    // A write to an entry found under another name updates that file (two files never hold one key).
    await source.put(7, { id: 7, title: 'seven!' });
    expect(JSON.parse(await readFile(path.join(folder, 'legacy-name.json'), 'utf8'))).toMatchObject({ title: 'seven!' });
    expect(await readdir(folder)).not.toContain('7.json');
    await source.delete(7);
    expect(await readdir(folder)).not.toContain('legacy-name.json');
  });

  it('a folder of integer names (compared as numbers at load): a file holding another key is served by it and written in place', async () => {
    const { open, data } = await app();
    const folder = path.join(data, 'films');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, '1.json'), JSON.stringify({ id: 1, title: 'one' }));
    await writeFile(path.join(folder, '2.json'), JSON.stringify({ id: '2', title: 'two, keyed by text' }));
    await writeFile(path.join(folder, '3.json'), JSON.stringify({ id: 9, title: 'nine, in the file of three' }));
    await writeFile(path.join(folder, '4.json'), JSON.stringify({ title: 'four, keyed by its name' }));
    const source = open(makeDefinition('films'));
    expect(await source.count([])).toBe(4);
    expect(await source.get(2)).toMatchObject({ title: 'two, keyed by text' });
    expect(await source.get(4)).toMatchObject({ id: 4 });
    expect(await source.get(3)).toBeUndefined();
    await source.put(9, { id: 9, title: 'nine!' });
    expect(JSON.parse(await readFile(path.join(folder, '3.json'), 'utf8'))).toMatchObject({ title: 'nine!' });
    expect(await readdir(folder)).not.toContain('9.json');
    // Named after their keys: written under their own names.
    await source.put(2, { id: 2, title: 'two!' });
    await source.put(4, { id: 4, title: 'four!' });
    // (Hidden: the open store's write journal.)
    expect((await readdir(folder)).filter((name) => !name.startsWith('.')).sort()).toEqual(['1.json', '2.json', '3.json', '4.json']);
  });

  it('writes md with YAML front matter and the body as content; tpl with the template; yaml as a document', async () => {
    const { open, data } = await app();
    const md = open(makeDefinition('pages', { source: { type: 'filebase', format: 'md' }, fields: [field('id', 'string')] }));
    await md.put('home', { id: 'home', title: 'Home', order: 1, body: '# Hello\n\nText.' });
    const text = await readFile(path.join(data, 'pages/home.md'), 'utf8');
    expect(text).toBe('---\nid: home\ntitle: Home\norder: 1\n---\n# Hello\n\nText.');
    const tpl = open(makeDefinition('views', { source: { type: 'filebase', format: 'tpl' }, fields: [field('id', 'string')] }));
    await tpl.put('card', { id: 'card', template: '<div>{{ title }}</div>' });
    expect(await readFile(path.join(data, 'views/card.tpl'), 'utf8')).toContain('---\n<div>{{ title }}</div>');
    const yaml = open(makeDefinition('people', { source: { type: 'filebase', format: 'yaml' } }));
    await yaml.put(3, { id: 3, name: 'Ann', born: '2020-01-01' });
    expect(await readFile(path.join(data, 'people/3.yaml'), 'utf8')).toBe('id: 3\nname: Ann\nborn: 2020-01-01\n');
    // Reading back: a date-looking YAML value stays the string it was.
    const again = createSourceRegistry(configFor(path.dirname(path.dirname(data))), path.dirname(path.dirname(data)), silentLogger).for(
      makeDefinition('people', { source: { type: 'filebase', format: 'yaml' } }),
    );
    opened.push(again);
    expect(await again.get(3)).toEqual({ id: 3, name: 'Ann', born: '2020-01-01' });
  });

  it('md files written by hand (no front matter) load with their body', async () => {
    const { open, data } = await app();
    await mkdir(path.join(data, 'notes'), { recursive: true });
    await writeFile(path.join(data, 'notes/intro.md'), 'Just text.');
    const source = open(makeDefinition('notes', { source: { type: 'filebase', format: 'md' }, fields: [field('id', 'string')] }));
    expect(await source.get('intro')).toEqual({ id: 'intro', body: 'Just text.' });
  });
});

describe('file and self sources', () => {
  it('csv: header row, JSON cells decoded, strings that look like JSON quoted on write', async () => {
    const { open, root } = await app();
    await writeFile(path.join(root, 'people.csv'), 'id,name,tags,active,age\n1,Ann,"[""a"",""b""]",true,31\n2,"Bob, Jr",,false,\n');
    const source = open(makeDefinition('people', { source: { type: 'file', file: 'people.csv' } }));
    expect(await source.get(1)).toEqual({ id: 1, name: 'Ann', tags: ['a', 'b'], active: true, age: 31 });
    expect(await source.get(2)).toEqual({ id: 2, name: 'Bob, Jr', active: false });
    await source.put(3, { id: 3, name: '42', note: '' });
    const text = await readFile(path.join(root, 'people.csv'), 'utf8');
    expect(text.split('\n')[0]).toBe('id,name,tags,active,age,note');
    expect(text).toContain('3,"""42""",,,,""""""');
  });

  it('json file keyed by key keeps its shape', async () => {
    const { open, data } = await app();
    await mkdir(data, { recursive: true });
    await writeFile(path.join(data, 'planets.json'), JSON.stringify({ earth: { name: 'Earth' }, mars: { name: 'Mars' } }));
    const source = open(makeDefinition('planets', { source: { type: 'file' }, fields: [field('id', 'string')] }));
    expect(await source.get('mars')).toEqual({ id: 'mars', name: 'Mars' });
    await source.put('venus', { id: 'venus', name: 'Venus' });
    const written = JSON.parse(await readFile(path.join(data, 'planets.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(written)).toEqual(['earth', 'mars', 'venus']);
  });

  it('a corrupt single file makes the source refuse to serve (409, degraded: #27) instead of overwriting it', async () => {
    const { open, data } = await app();
    await mkdir(data, { recursive: true });
    await writeFile(path.join(data, 'planets.json'), '{"earth": ');
    const source = open(makeDefinition('planets', { source: { type: 'file' } }));
    await expect(source.get('earth')).rejects.toMatchObject({ status: 409 });
    await expect(source.put('x', { id: 'x' })).rejects.toMatchObject({ status: 409 });
    expect(await readFile(path.join(data, 'planets.json'), 'utf8')).toBe('{"earth": ');
    expect(await source.healthy()).toBe(false);
  });

  it('a whole-file rewrite never replaces an edit: a file edited during every attempt refuses the write (409) and keeps the edit', async () => {
    const { open, data } = await app();
    await mkdir(data, { recursive: true });
    const file = path.join(data, 'planets.json');
    await writeFile(file, JSON.stringify({ earth: { name: 'Earth' } }));
    const source = open(makeDefinition('planets', { source: { type: 'file' }, fields: [field('id', 'string')] }));
    expect(await source.get('earth')).toEqual({ id: 'earth', name: 'Earth' });
    // An editor that saves each time the server starts a temp file, so the check right before
    // the rename finds the file changed on every attempt. Each save is one byte longer: the
    // size differs even when the clock has not ticked between two saves.
    let saves = 0;
    const edited = (): string => `${JSON.stringify({ earth: { name: 'Earth' }, moon: { name: `Moon ${saves}` } })}${' '.repeat(saves)}`;
    const editor = watch(data, (_event, name) => {
      if (typeof name === 'string' && name.endsWith('.tmp') && existsSync(path.join(data, name))) {
        saves++;
        writeFileSync(file, edited());
      }
    });
    try {
      await expect(source.put('venus', { id: 'venus', name: 'Venus' })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('kept changing on disk') });
    } finally {
      editor.close();
    }
    expect(saves).toBeGreaterThanOrEqual(2);
    expect(await readFile(file, 'utf8')).toBe(edited());
    // Nothing of the refused write is served; the edit is.
    await expect(source.get('venus')).resolves.toBeUndefined();
    await source.refresh?.('moon');
    expect(await source.get('moon')).toEqual({ id: 'moon', name: `Moon ${saves}` });
  });

  it('an edit saved by rename with the same size and mtime is still seen, and a write keeps it', async () => {
    const { open, data } = await app();
    await mkdir(data, { recursive: true });
    const file = path.join(data, 'planets.json');
    await writeFile(file, JSON.stringify({ earth: { name: 'Earth' }, mars: { name: 'Mars' } }));
    // A whole second, which both files can be given exactly.
    const second = Math.floor(Date.now() / 1000) - 60;
    utimesSync(file, second, second);
    const source = open(makeDefinition('planets', { source: { type: 'file' }, fields: [field('id', 'string')] }));
    expect(await source.get('mars')).toEqual({ id: 'mars', name: 'Mars' });
    // An editor (or `rsync -t`, `cp -p` of a restored copy) replacing the file by a rename with
    // the same number of bytes, its mtime the old one's: only the inode tells them apart.
    const before = statSync(file);
    const temp = `${file}.edit`;
    writeFileSync(temp, JSON.stringify({ earth: { name: 'Earth' }, mars: { name: 'Ares' } }));
    utimesSync(temp, second, second);
    renameSync(temp, file);
    const after = statSync(file);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    await source.refresh?.('mars');
    expect(await source.get('mars')).toEqual({ id: 'mars', name: 'Ares' });
    await source.put('venus', { id: 'venus', name: 'Venus' });
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ earth: { name: 'Earth' }, mars: { name: 'Ares' }, venus: { name: 'Venus' } });
  });

  it('self: writes update only the data of the definition file', async () => {
    const { open, root } = await app();
    const file = path.join(root, 'streams/colors.json');
    await mkdir(path.dirname(file), { recursive: true });
    const raw = { id: 'colors', name: 'Colors', fields: { id: 'string' }, data: { red: { hex: '#f00' } } };
    await writeFile(file, JSON.stringify(raw));
    const source = open({ ...makeDefinition('colors', { source: { type: 'self' }, fields: [field('id', 'string')], data: raw.data }), file });
    expect(await source.get('red')).toEqual({ id: 'red', hex: '#f00' });
    await source.put('blue', { id: 'blue', hex: '#00f' });
    const written = JSON.parse(await readFile(file, 'utf8')) as typeof raw;
    expect(written.name).toBe('Colors');
    expect(written.fields).toEqual({ id: 'string' });
    expect(written.data).toEqual({ red: { id: 'red', hex: '#f00' }, blue: { id: 'blue', hex: '#00f' } });
  });
});

describe('registry', () => {
  it('refuses source paths outside the app root', async () => {
    const { registry } = await app();
    expect(() => registry.for(makeDefinition('x', { source: { type: 'filebase', path: '../../etc' } }))).toThrow(/outside the application root/);
    expect(() => registry.for(makeDefinition('y', { source: { type: 'file', file: '/etc/passwd' } }))).toThrow(/outside the application root/);
    expect(() => registry.for(makeDefinition('z', { source: { type: 'nope' } }))).toThrow(/not registered/);
  });

  it('keeps a source while its source settings are unchanged, rebuilds it when they change, closes it on delete', async () => {
    const { registry, root } = await app();
    const hooks = new Hooks();
    hooks.on('definition.changed', ({ id, definition }) => registry.definitionChanged(id, definition as never));
    const first = registry.for(makeDefinition('films'));
    await first.put(1, { id: 1 });
    expect(registry.for({ ...makeDefinition('films'), name: 'Renamed' })).toBe(first);
    await hooks.emit('definition.changed', { id: 'films', action: 'updated', definition: makeDefinition('films', { source: { type: 'filebase', path: 'elsewhere' } }) as never });
    const second = registry.for(makeDefinition('films', { source: { type: 'filebase', path: 'elsewhere' } }));
    expect(second).not.toBe(first);
    expect(await second.count([])).toBe(0);
    await hooks.emit('definition.changed', { id: 'films', action: 'deleted', definition: null });
    expect(await second.healthy()).toBe(false);
    expect(await readdir(path.join(root, 'streams/data/films'))).toEqual(['1.json']);
  });

  it('cache: query results are reused until a write flushes them', async () => {
    const { open } = await app();
    const source = open(makeDefinition('films', { cache: { enabled: true, ttl: 60 } }));
    await source.put(1, { id: 1, year: 1 });
    const query = { where: [normalizeWhere('year', '>', 0)], orderBy: [] };
    const a = await source.query(query);
    expect(await source.query(query)).toBe(a);
    await source.put(2, { id: 2, year: 2 });
    const b = await source.query(query);
    expect(b).not.toBe(a);
    expect(b.map((e) => e.id)).toEqual([1, 2]);
  });
});

describe('criteria helpers', () => {
  it('LIKE translates SQL patterns', () => {
    expect(likeToRegExp('a%').test('ABC')).toBe(true);
    expect(likeToRegExp('a_c').test('abc')).toBe(true);
    expect(likeToRegExp('a_c').test('abbc')).toBe(false);
    expect(likeToRegExp('50\\%').test('50%')).toBe(true);
    expect(likeToRegExp('50\\%').test('500')).toBe(false);
    expect(likeToRegExp('a.c').test('abc')).toBe(false);
    expect(likeToRegExp('%x%').test('line\nx\nline')).toBe(true);
  });

  it('normalizes operators case-insensitively and refuses unknown ones and bad fields (400)', () => {
    expect(normalizeWhere('a', 'not  like', 'x').operator).toBe('NOT LIKE');
    expect(normalizeWhere('a', '<>', 1).operator).toBe('!=');
    expect(normalizeWhere('a', '==', 0)).toEqual({ boolean: 'and', field: 'a', operator: '=', value: 0 });
    expect(normalizeWhere('a', 'in', '1,2').value).toEqual(['1', '2']);
    expect(() => normalizeWhere('a', 'regexp', 'x')).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => normalizeWhere('$where', '=', 'x')).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => normalizeWhere('a.__proto__', '=', 'x')).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => normalizeWhere('a', 'between', '1')).toThrow(expect.objectContaining({ status: 400 }));
  });
});
