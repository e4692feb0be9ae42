import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, ValidationError } from '../../kernel/index.js';
import { definitionToJson, STREAM_REGISTRY } from '../../plugins/streams/index.js';
import { bootError, bootRegistry, type RegistryApp } from './registry-harness.js';

let app: RegistryApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function boot(files: Record<string, unknown>): Promise<RegistryApp> {
  app = await bootRegistry(files);
  return app;
}

/** Each row: a definition file that must fail, the JSON path and words the error names. */
const invalid: Array<[string, Record<string, unknown>, string, RegExp]> = [
  ['id pattern', { id: '-bad' }, '/id', /pattern/],
  ['handle pattern', { handle: 'bad id' }, '/handle', /pattern/],
  ['name longer than 50', { name: 'x'.repeat(51) }, '/name', /50/],
  ['field handle pattern (object form)', { fields: { '1bad': 'string' } }, '/fields/1bad', /not a valid name/],
  ['field handle pattern (list form)', { fields: [{ handle: 'bad-handle' }] }, '/fields/0/handle', /pattern/],
  ['list field without handle', { fields: [{ type: 'string' }] }, '/fields/0/handle', /required/],
  ['type string pattern', { fields: { title: 'Bad-Type' } }, '/fields/title', /pattern|string|object/],
  ['relationship without config', { fields: { author: { type: 'relationship' } } }, '/fields/author/config', /required/],
  ['relationship without related', { fields: { author: { type: 'relationship', config: {} } } }, '/fields/author/config/related', /required/],
  ['class-name pattern', { config: { abstract: 'NotAClass' } }, '/config/abstract', /pattern/],
  ['class-name with bad method', { config: { repository: 'App\\Repo@1x' } }, '/config/repository', /pattern/],
  ['source type', { config: { source: { type: 'Not A Type' } } }, '/config/source/type', /pattern|must/],
  ['source format enum', { config: { source: { type: 'filebase', format: 'xml' } } }, '/config/source/format', /one of/],
  ['filebase cannot be csv', { config: { source: { type: 'filebase', format: 'csv' } } }, '/config/source/format', /one of/],
  ['file cannot be yaml', { config: { source: { type: 'file', format: 'yaml' } } }, '/config/source/format', /one of/],
  ['cache ttl >= 0', { config: { cache: { ttl: -1 } } }, '/config/cache/ttl', />= 0/],
  ['cache ttl integer', { config: { cache: { ttl: 1.5 } } }, '/config/cache/ttl', /integer/],
  ['precision >= 0', { fields: { price: { type: 'decimal', config: { precision: -2 } } } }, '/fields/price/config/precision', />= 0/],
  ['related list needs one item', { fields: { tags: { type: 'relationship', config: { related: [] } } } }, '/fields/tags/config/related', /fewer than 1|must/],
  ['route verb', { routes: [{ handle: 'view', uri: '/x', verb: 'fetch' }] }, '/routes/0/verb', /one of/],
  ['allowed item unknown key', { fields: { meta: { type: 'object', config: { allowed: [{ foo: 'x' }] } } } }, '/fields/meta/config/allowed/0', /known key|fewer/],
  ['allowed item empty', { fields: { meta: { type: 'object', config: { allowed: [{}] } } } }, '/fields/meta/config/allowed/0', /fewer than 1/],
  ['allowed generic empty', { fields: { meta: { type: 'object', config: { allowed: [{ generic: '' }] } } } }, '/fields/meta/config/allowed/0/generic', /fewer than 1/],
  ['stream rules value', { rules: { title: 5 } }, '/rules/title', /string|array/],
  ['fields of a wrong kind', { fields: 5 }, '/fields', /must/],
  ['duplicate handle in list form', { fields: [{ handle: 'a' }, { handle: 'a' }] }, '/fields', /twice/],
];

describe('definition schema: each rule rejects a bad value, naming file and path', () => {
  it.each(invalid)('%s', async (_name, definition, jsonPath, words) => {
    const message = await bootError({ 'streams/things.json': definition });
    expect(message).toContain(path.join('streams', 'things.json'));
    expect(message).toContain(`at ${jsonPath}`);
    expect(message).toMatch(words);
  });
});

describe('definition schema: valid forms are accepted', () => {
  it('accepts every documented key in its valid form', async () => {
    const { registry } = await boot({
      'streams/authors.json': { fields: { id: 'integer', name: 'string' } },
      'streams/things.json': {
        $schema: './schema.json',
        id: 'things',
        name: 'Things',
        description: 'All kinds of things',
        docs: 'https://example.com/docs',
        config: {
          key_name: 'id',
          source: { type: 'filebase', format: 'yaml', path: 'data/things' },
          abstract: 'App\\Things\\Thing',
          criteria: '\\App\\Things\\Criteria@make',
          cache: { enabled: true, ttl: 0, store: 'memory' },
        },
        fields: [
          { handle: 'id', type: 'integer' },
          { handle: 'title', required: true, unique: true, rules: 'max:25|min:2', input: { type: 'text' } },
          { handle: 'author', type: 'relationship', config: { related: ['authors'], multiple: false } },
          { handle: 'status', type: 'select', config: { options: { draft: 'Draft', live: 'Live' } } },
          { handle: 'price', type: 'decimal', config: { precision: 0 } },
          { handle: 'meta', type: 'object', config: { allowed: [{ stream: 'authors' }, { generic: 'x', prototype: 'y' }] } },
          { handle: 'secret', protected: true, example: 'x' },
        ],
        rules: { title: ['required', 'max:40'], price: 'numeric' },
        routes: { show: '/things/{id}', edit: { uri: '/things/{id}/edit', verb: 'GET', middleware: 'auth' } },
        ui: { table: { columns: ['title'] } },
        geo: { index: true },
      },
    });
    const things = registry.require('things');
    expect(things.fields.map((f) => f.handle)).toEqual(['id', 'title', 'author', 'status', 'price', 'meta', 'secret']);
    expect(things.fields[1]).toMatchObject({ type: 'string', required: true, unique: true, rules: ['max:25', 'min:2'] });
    expect(things.rules).toEqual({ title: ['required', 'max:40'], price: ['numeric'] });
    expect(things.routes.map((r) => [r.handle, r.uri, r.verb, r.as])).toEqual([
      ['show', '/things/{id}', 'any', 'things.show'],
      ['edit', '/things/{id}/edit', 'get', 'things.edit'],
    ]);
    expect(things.routes[1]!.middleware).toEqual(['auth']);
    expect(things.extra).toEqual({ geo: { index: true } });
    expect(things.config.source).toEqual({ type: 'filebase', format: 'yaml', path: 'data/things' });
  });

  it('accepts file sources with csv and file formats the spec lists', async () => {
    const { registry } = await boot({
      'streams/a.json': { config: { source: { type: 'file', format: 'csv' } } },
      'streams/b.json': { config: { source: { type: 'self' } }, data: [{ id: 1 }] },
      'streams/c.json': { config: { source: { type: 'App\\Sources\\Custom' } } },
    });
    expect(registry.require('a').config.source.format).toBe('csv');
    expect(registry.require('b').data).toEqual([{ id: 1 }]);
  });
});

describe('normalization', () => {
  it('takes the id from id, then the legacy handle, then the file name; name defaults to the title-cased id', async () => {
    const { registry } = await boot({
      'streams/one.json': { id: 'first_one' },
      'streams/two.json': { handle: 'second' },
      'streams/book_authors.json': {},
    });
    expect(registry.list().map((d) => d.id)).toEqual(['book_authors', 'first_one', 'second']);
    expect(registry.require('book_authors').name).toBe('Book Authors');
    expect(registry.require('first_one').name).toBe('First One');
  });

  it('normalizes the three fields forms into one list; a missing type is string', async () => {
    await boot({
      'streams/list.json': { fields: [{ handle: 'title' }, { handle: 'year', type: 'integer' }] },
      'streams/object.json': { fields: { title: 'string', year: { type: 'integer' }, note: {} } },
      'streams/imported.json': { fields: '@fields/common.json' },
      'fields/common.json': { title: 'string', year: 'integer' },
    });
    const types = (id: string) => app!.registry.require(id).fields.map((f) => `${f.handle}:${f.type}`);
    expect(types('list')).toEqual(['title:string', 'year:integer']);
    expect(types('object')).toEqual(['title:string', 'year:integer', 'note:string']);
    expect(types('imported')).toEqual(['title:string', 'year:integer']);
  });

  it('resolves a single-field import and keeps the raw import in the stored form', async () => {
    const { registry } = await boot({
      'streams/books.json': { fields: { title: 'string', author: '@fields/author.json' } },
      'fields/author.json': { type: 'relationship', config: { related: 'authors' } },
      'streams/authors.json': {},
    });
    const books = registry.require('books');
    expect(books.fields[1]).toMatchObject({ handle: 'author', type: 'relationship', config: { related: 'authors' } });
    expect(definitionToJson(books)).toMatchObject({ id: 'books', fields: { author: '@fields/author.json' } });
  });

  it('refuses an import outside the app root, and a missing import file', async () => {
    expect(await bootError({ 'streams/x.json': { fields: '@../outside.json' } })).toMatch(/at \/fields: .*outside the application root/);
    expect(await bootError({ 'streams/x.json': { fields: { a: '@missing.json' } } })).toMatch(/at \/fields\/a: .*cannot be read/);
  });

  it('merges extends: parent fields and config, the child wins', async () => {
    const { registry } = await boot({
      'streams/base.json': { config: { key_name: 'uid', cache: { enabled: true } }, fields: { uid: 'uuid', title: 'string', note: 'string' } },
      'streams/child.json': { extends: 'base', config: { cache: { enabled: false } }, fields: { title: { type: 'string', required: true }, extra: 'integer' } },
    });
    const child = registry.require('child');
    expect(child.fields.map((f) => f.handle)).toEqual(['uid', 'title', 'note', 'extra']);
    expect(child.fields[1]!.required).toBe(true);
    expect(child.config.key_name).toBe('uid');
    expect(child.config.cache).toEqual({ enabled: false });
  });

  it('boots past an unknown parent (the stream waits for it, #14 item 4) and rejects a cycle', async () => {
    const { registry } = await boot({ 'streams/a.json': { extends: 'nope' }, 'streams/b.json': { extends: 'a' }, 'streams/c.json': {} });
    expect(registry.list().map((d) => d.id)).toEqual(['c']);
    expect(registry.troubles().unserved).toEqual([
      expect.objectContaining({ stream: 'a', reason: expect.stringContaining('extends [nope], which does not exist') }),
      expect.objectContaining({ stream: 'b', reason: expect.stringContaining('extends [a], which does not exist') }),
    ]);
    expect(await bootError({ 'streams/a.json': { extends: 'b' }, 'streams/b.json': { extends: 'a' } })).toMatch(/cycle/);
  });

  it('turns the route shorthand into a view route', async () => {
    const { registry } = await boot({ 'streams/pages.json': { route: '/pages/{id}' } });
    expect(registry.require('pages').routes).toEqual([{ handle: 'view', uri: '/pages/{id}', verb: 'any', as: 'pages.view' }]);
  });

  it('reports bad JSON with its line, and a non-object definition', async () => {
    expect(await bootError({ 'streams/bad.json': '{\n  "id": "bad",\n  oops\n}' })).toMatch(/bad\.json: is not valid JSON.*line 3/);
    expect(await bootError({ 'streams/list.json': '[1,2]' })).toMatch(/list\.json at \/: a stream definition must be a JSON object/);
  });

  it('refuses two files with the same id and the reserved meta-stream id', async () => {
    expect(await bootError({ 'streams/a.json': { id: 'same' }, 'streams/b.json': { id: 'same' } })).toMatch(/\[same\] is also defined/);
    expect(await bootError({ 'streams/x.json': { id: 'core.streams' } })).toMatch(/reserved/);
  });
});

describe('registry writes', () => {
  it('creates, replaces, merges and removes definitions durably in streams/<id>.json', async () => {
    const { registry, root } = await boot({ 'streams/keep.json': {} });
    const file = path.join(root, 'streams', 'planets.json');

    const created = await registry.create({ id: 'planets', name: 'Planets', fields: { name: 'string' } });
    expect(created.id).toBe('planets');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ id: 'planets', name: 'Planets', fields: { name: 'string' } });

    await expect(registry.create({ id: 'planets' })).rejects.toMatchObject({ status: 409, errors: [{ message: 'The id has already been taken.' }] });

    const replaced = await registry.replace('planets', { description: 'Round things' });
    expect(replaced.created).toBe(false);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ id: 'planets', description: 'Round things' });

    const merged = await registry.merge('planets', { name: 'Worlds' });
    expect(merged.created).toBe(false);
    expect(definitionToJson(merged.definition)).toEqual({ id: 'planets', name: 'Worlds', description: 'Round things' });

    const upserted = await registry.merge('moons', { fields: { name: 'string' } });
    expect(upserted.created).toBe(true);
    expect(registry.has('moons')).toBe(true);

    expect(await registry.remove('planets')).toBe(true);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(registry.has('planets')).toBe(false);
    expect(await registry.remove('planets')).toBe(false);
  });

  it('answers 409 with one element per problem and writes nothing for an invalid definition', async () => {
    const { registry, root } = await boot({});
    const error = await registry.create({ id: 'bad', name: 'n'.repeat(60), config: { cache: { ttl: -5 } } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).errors.map((e) => e.meta?.field).sort();
    expect(paths).toEqual(['/config/cache/ttl', '/name']);
    await expect(stat(path.join(root, 'streams', 'bad.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('404s an unknown stream with the decisions.md message', async () => {
    const { registry } = await boot({});
    expect(() => registry.require('nope')).toThrow('Stream [nope] not found.');
  });

  it('rebuilds a child when its parent changes', async () => {
    const { registry } = await boot({ 'streams/base.json': { fields: { a: 'string' } }, 'streams/child.json': { extends: 'base' } });
    await registry.merge('base', { fields: { a: 'string', b: 'integer' } });
    expect(registry.require('child').fields.map((f) => f.handle)).toEqual(['a', 'b']);
  });
});

describe('addon hooks on definitions', () => {
  const geoAddon = definePlugin({
    name: 'geo-test',
    register({ hooks }) {
      hooks.on('definition.extend', ({ extend }) =>
        extend('geo', { type: 'object', additionalProperties: false, properties: { index: { type: 'boolean' } } }),
      );
      hooks.on('definition.loading', ({ definition }) => {
        if (definition.geo) definition.description ??= 'geo-enabled';
      });
    },
  });

  it('validates an extension key with its own schema and lets loading listeners transform definitions', async () => {
    app = await bootRegistry({ 'streams/places.json': { geo: { index: true } } }, [geoAddon]);
    expect(app.registry.require('places').extra).toEqual({ geo: { index: true } });
    expect(app.registry.require('places').description).toBe('geo-enabled');
  });

  it('rejects an invalid value for the extension key with file and path', async () => {
    const message = await bootError({ 'streams/places.json': { geo: { index: 'yes' } } }, [geoAddon]);
    expect(message).toMatch(/places\.json at \/geo\/index: must be boolean/);
  });

  it('runs semantic checks registered by other plugins', async () => {
    const checker = definePlugin({
      name: 'checker',
      requires: ['streams'],
      register({ use }) {
        use(STREAM_REGISTRY)
          .addCheck((d) => (d.fields.some((f) => f.type === 'nope') ? [{ path: '/fields', message: 'type [nope] is not registered' }] : []));
      },
    });
    const message = await bootError({ 'streams/x.json': { fields: { a: 'nope' } } }, [checker]);
    expect(message).toMatch(/x\.json at \/fields: type \[nope\] is not registered/);
  });
});

describe('problem paths point where the author wrote the field', () => {
  const unknownType = definePlugin({
    name: 'type-check',
    requires: ['streams'],
    register({ use }) {
      use(STREAM_REGISTRY)
        .addCheck((d) =>
          d.fields.flatMap((f, i) => [
            ...(f.type === 'nosuchtype' ? [{ path: `/fields/${i}/type`, message: `unknown type [${f.type}]` }] : []),
            ...f.rules.flatMap((r, j) => (r === 'shiny' ? [{ path: `/fields/${i}/rules/${j}`, message: 'unknown rule [shiny]' }] : [])),
          ]),
        );
    },
  });

  it('names the handle in the object form and the rules string when written with pipes', async () => {
    expect(await bootError({ 'streams/s.json': { fields: { a: 'string', x: 'nosuchtype' } } }, [unknownType])).toMatch(/s\.json at \/fields\/x\/type: unknown type/);
    expect(await bootError({ 'streams/s.json': { fields: { x: { rules: 'required|shiny' } } } }, [unknownType])).toMatch(/at \/fields\/x\/rules: unknown rule/);
    expect(await bootError({ 'streams/s.json': { fields: { x: { rules: ['required', 'shiny'] } } } }, [unknownType])).toMatch(/at \/fields\/x\/rules\/1: unknown rule/);
  });

  it('uses the own list position when a parent contributes fields first', async () => {
    const message = await bootError(
      { 'streams/base.json': { fields: { a: 'string', b: 'string' } }, 'streams/child.json': { extends: 'base', fields: [{ handle: 'x', type: 'nosuchtype' }] } },
      [unknownType],
    );
    expect(message).toMatch(/child\.json at \/fields\/0\/type: unknown type/);
  });
});
