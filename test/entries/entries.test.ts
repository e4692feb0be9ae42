import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, Hooks } from '../../kernel/index.js';
import { EntriesServiceImpl } from '../../plugins/entries/service.js';
import { createSourceRegistry } from '../../plugins/sources/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';
import { field, makeDefinition } from '../sources/definitions.js';
import { configFor, silentLogger, tempRoot } from '../sources/harness.js';
import { definitionsRegistry, stubFields } from './stand-ins.js';

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function setup(definitions: StreamDefinition[], root?: string) {
  const dir = root ?? (await tempRoot('entries-'));
  if (!root) roots.push(dir);
  const config = configFor(dir);
  const sources = createSourceRegistry(config, dir, silentLogger);
  const hooks = new Hooks();
  const fields = stubFields();
  const service = new EntriesServiceImpl({ streams: definitionsRegistry(definitions), fields: () => fields, sources, hooks, logger: silentLogger });
  return { root: dir, config, sources, hooks, fields, service };
}

const films = (): StreamDefinition =>
  makeDefinition('films', {
    fields: [field('id', 'integer'), field('title'), field('year', 'integer'), field('seen', 'boolean'), field('director_id', 'relationship', { related: 'people' })],
  });
const people = (): StreamDefinition => makeDefinition('people', { fields: [field('id', 'integer'), field('name'), field('secret', 'string')] });

describe('entries service', () => {
  it('increments integer keys, also under concurrent creates, and keeps them across a reopen', async () => {
    const { service, root, sources } = await setup([films()]);
    const created = await Promise.all(Array.from({ length: 25 }, (_, i) => service.create('films', { title: `t${i}` })));
    expect(created.map((e) => e.id).sort((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    await service.create('films', { id: 100, title: 'explicit' });
    expect((await service.create('films', { title: 'after' })).id).toBe(101);
    await service.drain();
    await sources.closeAll();
    const again = await setup([films()], root);
    expect((await again.service.create('films', { title: 'reopened' })).id).toBe(102);
    expect(JSON.parse(await readFile(path.join(root, 'streams/data/films/7.json'), 'utf8'))).toMatchObject({ id: 7, title: 't6' });
  });

  it('gives UUID keys to string keys and honours config.default', async () => {
    const slugs = makeDefinition('slugs', { fields: [field('id', 'string'), field('title')] });
    const counted = makeDefinition('counted', { keyName: 'code', fields: [field('code', 'string', { default: 'increment' })] });
    const { service } = await setup([slugs, counted]);
    const a = await service.create('slugs', { title: 'x' });
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await service.create('counted', {})).code).toBe(1);
  });

  it('casts URL keys by the key field type', async () => {
    const { service } = await setup([films()]);
    await service.create('films', { id: 4, title: 'four' });
    expect(await service.find('films', '4')).toMatchObject({ id: 4, title: 'four' });
    expect(await service.find('films', 'nope')).toBeUndefined();
    await expect(service.find('nostream', '4')).rejects.toMatchObject({ status: 404 });
  });

  it('refuses keys that would name a file outside the folder and prototype keys, writing nothing', async () => {
    const slugs = makeDefinition('slugs', { fields: [field('id', 'string')] });
    const { service, root } = await setup([slugs]);
    for (const bad of ['../escape', 'a/b', '.env', '__proto__']) {
      await expect(service.create('slugs', { id: bad })).rejects.toMatchObject({ status: 400 });
      await expect(service.replace('slugs', bad, {})).rejects.toMatchObject({ status: 400 });
    }
    await expect(service.create('slugs', JSON.parse('{"__proto__": {"x": 1}, "id": "ok"}') as Record<string, unknown>)).rejects.toMatchObject({ status: 400 });
    await expect(readdir(path.join(root, 'streams/data/slugs'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readdir(root)).resolves.toEqual(expect.not.arrayContaining(['escape.json']));
  });

  it('answers 409 for a duplicate key on create', async () => {
    const { service } = await setup([films()]);
    await service.create('films', { id: 1, title: 'a' });
    await expect(service.create('films', { id: '1', title: 'b' })).rejects.toMatchObject({ status: 409 });
    expect((await service.find('films', 1))!.title).toBe('a');
  });

  it('serializes writes per entry: concurrent PATCHes of different fields both survive', async () => {
    const { service } = await setup([films()]);
    await service.create('films', { id: 1, title: 'a', year: 1 });
    await Promise.all([
      service.patch('films', '1', { title: 'patched' }),
      service.patch('films', '1', { year: 2000 }),
      service.patch('films', 1, { seen: true }),
    ]);
    expect(await service.find('films', 1)).toMatchObject({ id: 1, title: 'patched', year: 2000, seen: true });
  });

  it('PUT replaces the whole entry, PUT/PATCH on a missing key create it with the URL key', async () => {
    const { service } = await setup([films()]);
    await service.create('films', { id: 1, title: 'a', year: 1 });
    const replaced = await service.replace('films', '1', { title: 'only', id: 999 });
    expect(replaced).toMatchObject({ created: false, entry: { id: 1, title: 'only' } });
    expect(replaced.entry).not.toHaveProperty('year');
    expect(await service.patch('films', '9', { title: 'new' })).toMatchObject({ created: true, entry: { id: 9, title: 'new' } });
    expect(await service.delete('films', '9')).toBe(true);
    expect(await service.delete('films', '9')).toBe(false);
  });

  it('runs entry hooks in order; a *ing listener vetoes (AppError keeps its status, other errors go on as they are: a 500)', async () => {
    const { service, hooks } = await setup([films()]);
    const seen: string[] = [];
    for (const name of ['entry.saving', 'entry.creating', 'entry.created', 'entry.saved', 'entry.updating', 'entry.updated', 'entry.deleting', 'entry.deleted'] as const) {
      hooks.on(name, () => void seen.push(name));
    }
    hooks.on('entry.creating', ({ entry }) => {
      entry.title = String(entry.title).toUpperCase();
    });
    const created = await service.create('films', { id: 1, title: 'shout' });
    expect(created.title).toBe('SHOUT');
    expect(seen).toEqual(['entry.saving', 'entry.creating', 'entry.created', 'entry.saved']);

    const off = hooks.on('entry.updating', () => {
      throw new Error('frozen');
    });
    await expect(service.patch('films', 1, { title: 'x' })).rejects.toThrow('frozen');
    await expect(service.patch('films', 1, { title: 'x' })).rejects.not.toHaveProperty('status');
    off();
    hooks.on('entry.deleting', () => {
      throw new AppError(423, 'locked');
    });
    await expect(service.delete('films', 1)).rejects.toMatchObject({ status: 423 });
    expect(await service.find('films', 1)).toMatchObject({ title: 'SHOUT' });
  });

  it('lists with cast filters, sorts and pages, totals with the same filters', async () => {
    const { service } = await setup([films()]);
    for (let i = 1; i <= 12; i++) await service.create('films', { id: i, title: `t${i % 3}`, year: 1970 + i, seen: i % 2 === 0 });
    const result = await service.list('films', {
      where: [
        { boolean: 'and', field: 'year', operator: '>', value: '1972' },
        { boolean: 'and', field: 'seen', operator: '=', value: 'true' },
      ],
      orderBy: [{ field: 'year', direction: 'desc' }],
      page: 2,
      perPage: 2,
    });
    expect(result.total).toBe(5);
    expect(result.entries.map((e) => e.id)).toEqual([8, 6]);
    const inList = await service.list('films', { where: [{ boolean: 'and', field: 'year', operator: 'IN', value: '1971,1973' }], orderBy: [], page: 1, perPage: 10 });
    expect(inList.entries.map((e) => e.id)).toEqual([1, 3]);
    await expect(service.list('films', { where: [{ boolean: 'and', field: 'year', operator: '=', value: 'abc' }], orderBy: [], page: 1, perPage: 10 })).rejects.toMatchObject({ status: 400 });
    await expect(service.list('films', { where: [{ boolean: 'and', field: 'year', operator: '=', value: { $ne: 1 } }], orderBy: [], page: 1, perPage: 10 })).rejects.toMatchObject({ status: 400 });
    await expect(service.list('films', { where: [{ boolean: 'and', field: '$where', operator: '=', value: 1 }], orderBy: [], page: 1, perPage: 10 })).rejects.toMatchObject({ status: 400 });
  });

  it('eager-loads relations with one batched lookup per relation', async () => {
    const { service, sources } = await setup([films(), people()]);
    for (let i = 1; i <= 3; i++) await service.create('people', { id: i, name: `p${i}` });
    for (let i = 1; i <= 6; i++) await service.create('films', { id: i, title: `f${i}`, director_id: (i % 3) + 1 });
    await service.create('films', { id: 7, title: 'nobody' });
    const peopleSource = sources.for(people());
    let batches = 0;
    let singles = 0;
    const getMany = peopleSource.getMany.bind(peopleSource);
    const get = peopleSource.get.bind(peopleSource);
    peopleSource.getMany = (keys) => (batches++, getMany(keys));
    peopleSource.get = (key) => (singles++, get(key));
    const result = await service.list('films', { where: [], orderBy: [], page: 1, perPage: 10, with: ['director'] });
    expect(batches).toBe(1);
    expect(singles).toBe(0);
    expect(result.entries[0]).toMatchObject({ id: 1, director_id: 2, director: { id: 2, name: 'p2' } });
    expect(result.entries[6]).toMatchObject({ id: 7, director: null });
    await expect(service.list('films', { where: [], orderBy: [], page: 1, perPage: 10, with: ['nope'] })).rejects.toMatchObject({ status: 400 });
  });

  it('runs read-only query steps; write and unknown methods are 400; addons add read methods', async () => {
    const { service } = await setup([films()]);
    for (let i = 1; i <= 10; i++) await service.create('films', { id: i, title: `t${i}`, year: 1970 + i });
    const steps = [
      { method: 'where', args: ['year', '>', 1972] },
      { method: 'orWhere', args: ['id', 1] },
      { method: 'order_by', args: ['year', 'desc'] },
      { method: 'skip', args: [1] },
      { method: 'limit', args: [5] },
    ];
    const page1 = await service.query('films', steps, 1, 2);
    expect(page1.entries.map((e) => e.id)).toEqual([9, 8]);
    expect(page1.total).toBe(5);
    const page3 = await service.query('films', steps, 3, 2);
    expect(page3.entries.map((e) => e.id)).toEqual([5]);
    for (const method of ['create', 'save', 'delete', 'truncate', 'constructor', '__proto__', 'whereRaw']) {
      await expect(service.query('films', [{ method, args: [{ id: 99 }] }], 1, 10)).rejects.toMatchObject({ status: 400 });
    }
    expect(await service.find('films', 99)).toBeUndefined();
    service.registerReadMethod('recent', (criteria, [n]) => criteria.orderBy('year', 'desc').limit(n));
    expect((await service.query('films', [{ method: 'recent', args: [3] }], 1, 10)).entries.map((e) => e.id)).toEqual([10, 9, 8]);
    expect(() => service.registerReadMethod('create', () => undefined)).toThrow();
  });

  it('caches the serialized JSON of a stored entry until it changes', async () => {
    const { service, fields } = await setup([films()]);
    const definition = films();
    let serialized = 0;
    const serialize = fields.serialize.bind(fields);
    fields.serialize = (s, e) => (serialized++, serialize(s, e));
    const entry = await service.create('films', { id: 1, title: 'a' });
    const json = service.toJson(definition, entry);
    expect(JSON.parse(json)).toMatchObject({ id: 1, title: 'a' });
    expect(service.toJson(definition, (await service.find('films', 1))!)).toBe(json);
    expect(serialized).toBe(1);
    await service.patch('films', 1, { title: 'b' });
    expect(JSON.parse(service.toJson(definition, (await service.find('films', 1))!))).toMatchObject({ title: 'b' });
    expect(serialized).toBe(2);
  });

  it('passes a lookup that answers unique checks from the source', async () => {
    const unique = makeDefinition('users', { fields: [field('id', 'integer'), { ...field('email'), unique: true }] });
    const { service } = await setup([unique]);
    await service.create('users', { email: 'a@x.io' });
    await expect(service.create('users', { email: 'a@x.io' })).rejects.toMatchObject({ status: 409 });
    // The entry itself does not collide with its own value.
    await expect(service.patch('users', 1, { email: 'a@x.io' })).resolves.toMatchObject({ created: false });
    expect(await service.lookup.exists('users', 'id', 1)).toBe(true);
    expect(await service.lookup.exists('users', 'id', '1', 1)).toBe(false);
    expect(await service.ready()).toBe(true);
  });
});
