import { describe, expect, it } from 'vitest';
import { isHashed, verifyHash } from '../../plugins/fields/hashing.js';
import { errorsOf, makeService, makeServiceWith, MemoryLookup, stream } from './harness.js';

interface TypeCase {
  type: string;
  config?: Record<string, unknown>;
  /** input -> stored form */
  valid: Array<[unknown, unknown]>;
  /** input -> [rule, message] of the single error element */
  invalid: Array<[unknown, string, string]>;
  /** stored -> API form (default: unchanged) */
  serialized?: Array<[unknown, unknown]>;
  /** filter input -> cast filter value */
  filters?: Array<[unknown, unknown]>;
  /** filter inputs that are a 400 */
  badFilters?: unknown[];
  /** config.default -> expected stored value, or a predicate */
  defaults?: Array<[unknown, unknown | ((v: unknown) => boolean)]>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const cases: TypeCase[] = [
  {
    type: 'string',
    valid: [['Dune', 'Dune'], ['', ''], [42, '42']],
    invalid: [[true, 'string', 'The value field must be a string.'], [{ a: 1 }, 'string', 'The value field must be a string.']],
    filters: [['x', 'x'], [4, '4']],
    defaults: [['Untitled', 'Untitled']],
  },
  {
    type: 'integer',
    valid: [[4, 4], ['4', 4], [' -12 ', -12], [0, 0]],
    invalid: [['abc', 'integer', 'The value field must be an integer.'], [4.5, 'integer', 'The value field must be an integer.'], ['4.5', 'integer', 'The value field must be an integer.'], [true, 'integer', 'The value field must be an integer.']],
    filters: [['4', 4], [7, 7]],
    badFilters: ['abc', '4.5'],
    defaults: [[3, 3]],
  },
  {
    type: 'number',
    valid: [[4.5, 4.5], ['4.5', 4.5], ['1e3', 1000], [-2, -2]],
    invalid: [['four', 'numeric', 'The value field must be a number.'], [[1], 'numeric', 'The value field must be a number.']],
    filters: [['2.5', 2.5]],
    badFilters: ['x'],
  },
  {
    type: 'decimal',
    config: { precision: 2 },
    valid: [[1.005, 1.01], ['3.14159', 3.14], [2, 2], [-1.005, -1.01]],
    invalid: [['pi', 'numeric', 'The value field must be a number.']],
    filters: [['3.5', 3.5]],
  },
  {
    type: 'boolean',
    valid: [[true, true], [false, false], [1, true], [0, false], ['true', true], ['false', false], ['1', true], ['0', false], ['yes', true], ['no', false], ['on', true], ['off', false], ['YES', true]],
    invalid: [['maybe', 'boolean', 'The value field must be true or false.'], [2, 'boolean', 'The value field must be true or false.']],
    filters: [['true', true], ['0', false], [true, true]],
    badFilters: ['maybe'],
    defaults: [[false, false]],
  },
  {
    type: 'email',
    valid: [['ann@example.com', 'ann@example.com'], [' bob@example.org ', 'bob@example.org']],
    invalid: [['nope', 'email', 'The value field must be a valid email address.'], [5, 'email', 'The value field must be a valid email address.']],
  },
  {
    type: 'url',
    valid: [['https://example.com/a?b=1', 'https://example.com/a?b=1']],
    invalid: [['example.com', 'url', 'The value field must be a valid URL.'], ['not a url', 'url', 'The value field must be a valid URL.']],
  },
  {
    type: 'uuid',
    valid: [['0E8B3A52-3C6A-4B5B-9D2E-1F0A2B3C4D5E', '0e8b3a52-3c6a-4b5b-9d2e-1f0a2b3c4d5e']],
    invalid: [['1234', 'uuid', 'The value field must be a valid UUID.']],
    filters: [['0E8B3A52-3C6A-4B5B-9D2E-1F0A2B3C4D5E', '0e8b3a52-3c6a-4b5b-9d2e-1f0a2b3c4d5e']],
    defaults: [[true, (v: unknown) => typeof v === 'string' && UUID.test(v)]],
  },
  {
    type: 'slug',
    valid: [['Hello World!', 'hello-world'], ['déjà vu', 'deja-vu'], ['Straße Привет', 'strasse-privet'], ['already-a-slug', 'already-a-slug'], ['a_b c', 'a-b-c']],
    invalid: [['!!!', 'slug', 'The value field must be a valid slug.'], [12, 'slug', 'The value field must be a valid slug.']],
  },
  {
    type: 'slug',
    config: { separator: '_' },
    valid: [['Hello World', 'hello_world'], ['a-b', 'a_b']],
    invalid: [],
  },
  {
    type: 'color',
    valid: [['#FFAA00', '#ffaa00'], ['#abc', '#abc'], ['#11223344', '#11223344']],
    invalid: [['red', 'color', 'The value field must be a valid hexadecimal color.'], ['#12', 'color', 'The value field must be a valid hexadecimal color.']],
    filters: [['#ABC', '#abc']],
  },
  {
    type: 'image',
    valid: [['images/cover.jpg', 'images/cover.jpg']],
    invalid: [[3, 'image', 'The value field must be an image path or URL.']],
  },
  {
    type: 'file',
    valid: [['https://cdn.example.com/a.pdf', 'https://cdn.example.com/a.pdf']],
    invalid: [[{}, 'file', 'The value field must be a file path or URL.']],
  },
  {
    type: 'select',
    config: { options: { novel: 'Novel', essay: 'Essay', '1': 'One' } },
    valid: [['novel', 'novel'], [1, '1']],
    invalid: [['poem', 'in', 'The selected value is invalid.']],
    filters: [['essay', 'essay'], [1, '1']],
    badFilters: ['poem'],
    defaults: [['novel', 'novel']],
  },
  {
    type: 'enum',
    config: { options: ['draft', 'live', 3] },
    valid: [['live', 'live'], ['3', 3]],
    invalid: [['gone', 'in', 'The selected value is invalid.']],
  },
  {
    type: 'multiselect',
    config: { options: { red: 'Red', green: 'Green', blue: 'Blue' } },
    valid: [[['red', 'blue'], ['red', 'blue']], [[], []]],
    invalid: [[['red', 'pink'], 'in', 'The selected value.1 is invalid.'], ['red', 'in', 'The selected value is invalid.']],
    filters: [['green', 'green']],
  },
  {
    type: 'date',
    valid: [['2024-02-29', '2024-02-29'], ['2024-05-01T23:30:00+00:00', '2024-05-01'], ['2024-05-01 10:00', '2024-05-01']],
    invalid: [['2023-02-29', 'date', 'The value field must be a valid date.'], ['yesterday', 'date', 'The value field must be a valid date.'], [20240101, 'date', 'The value field must be a valid date.']],
    filters: [['2024-05-01', '2024-05-01']],
    badFilters: ['soon'],
    defaults: [['now', (v: unknown) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)], ['2000-01-01', '2000-01-01']],
  },
  {
    type: 'date',
    config: { format: 'd/m/Y' },
    valid: [['01/02/2024', '01/02/2024'], ['2024-02-01', '01/02/2024']],
    invalid: [['31/02/2024', 'date', 'The value field must be a valid date.']],
  },
  {
    type: 'datetime',
    valid: [
      ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00+00:00'],
      ['2024-05-01 12:30:15', '2024-05-01T12:30:15+00:00'],
      ['2024-05-01T10:00:00+02:00', '2024-05-01T08:00:00+00:00'],
    ],
    invalid: [['2024-13-01 10:00', 'date', 'The value field must be a valid date.']],
    filters: [['2024-05-01 10:00:00', '2024-05-01T10:00:00+00:00']],
    defaults: [['now', (v: unknown) => typeof v === 'string' && Math.abs(Date.parse(v) - Date.now()) < 5000]],
  },
  {
    type: 'datetime',
    config: { format: 'Y-m-d H:i:s', timezone: 'Europe/Paris' },
    valid: [
      ['2024-07-01T10:00:00Z', '2024-07-01 12:00:00'],
      ['2024-01-01T10:00:00Z', '2024-01-01 11:00:00'],
      ['2024-07-01 12:00:00', '2024-07-01 12:00:00'],
    ],
    invalid: [],
  },
  {
    type: 'time',
    valid: [['10:30', '10:30:00'], ['23:59:59', '23:59:59'], ['3:05 pm', '15:05:00']],
    invalid: [['25:00', 'date_format', 'The value field must be a valid time.'], ['noon', 'date_format', 'The value field must be a valid time.']],
    defaults: [['now', (v: unknown) => typeof v === 'string' && /^\d{2}:\d{2}:\d{2}$/.test(v)]],
  },
  {
    type: 'array',
    valid: [[[1, 'a', { b: 2 }], [1, 'a', { b: 2 }]], [[], []]],
    invalid: [['nope', 'array', 'The value field must be an array.'], [{ a: 1 }, 'array', 'The value field must be an array.']],
    defaults: [[['x'], ['x']]],
  },
  {
    type: 'array',
    config: { items: [{ type: 'integer', rules: 'min:1' }] },
    valid: [[['1', 2], [1, 2]]],
    invalid: [[[1, 'x'], 'integer', 'The value.1 field must be an integer.'], [[0], 'min', 'The value.0 field must be at least 1.']],
    filters: [['3', 3]],
  },
  {
    type: 'array',
    config: { items: [{ type: 'integer' }], enforce_items: false },
    valid: [[['1', 'x'], ['1', 'x']]],
    invalid: [],
  },
  {
    type: 'object',
    valid: [[{ a: 1, b: [2] }, { a: 1, b: [2] }]],
    invalid: [[[1, 2], 'object', 'The value field must be an object.'], ['x', 'object', 'The value field must be an object.']],
  },
  {
    type: 'object',
    config: { properties: { name: { type: 'string', required: true }, born: 'date', age: 'integer' } },
    valid: [[{ name: 'Ann', born: '1990-01-02', age: '33', extra: true }, { name: 'Ann', born: '1990-01-02', age: 33, extra: true }]],
    invalid: [[{ born: '1990-01-02' }, 'required', 'The value.name field is required.'], [{ name: 'Ann', age: 'old' }, 'integer', 'The value.age field must be an integer.']],
  },
  {
    type: 'hash',
    valid: [],
    // "" is no password (stored as null, see "accepts null" below), not "must be a string".
    invalid: [[5, 'string', 'The value field must be a string.']],
    badFilters: ['secret'],
  },
];

describe.each(cases.map((c) => [`${c.type}${c.config ? ` ${JSON.stringify(c.config)}` : ''}`, c] as const))('type %s', (_name, c) => {
  const definition = stream('things', { id: 'integer', value: { type: c.type, config: c.config ?? {} } });
  const service = makeService([definition]);
  const lookup = new MemoryLookup();

  it('has no definition problems', () => {
    expect(service.check(definition)).toEqual([]);
  });

  it.each(c.valid.map((v) => [JSON.stringify(v[0]), v] as const))('accepts %s and stores it cast', async (_label, [input, stored]) => {
    const frozen = structuredClone({ value: input });
    const out = await service.prepare(definition, frozen, { mode: 'create', lookup });
    expect(out.value).toEqual(stored);
    expect(frozen).toEqual({ value: input });
    // Storage round trip: JSON on disk, read back, serialized.
    const reread = JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
    const api = service.serialize(definition, reread);
    const expected = c.serialized?.find(([s]) => JSON.stringify(s) === JSON.stringify(stored))?.[1] ?? stored;
    expect(api.value).toEqual(expected);
    // Writing the stored form back gives the same stored form (a GET then PUT changes nothing).
    const again = await service.prepare(definition, { value: api.value }, { mode: 'create', lookup });
    expect(again.value).toEqual(stored);
  });

  it.each(c.invalid.map((v) => [JSON.stringify(v[0]), v] as const))('rejects %s', async (_label, [input, rule, message]) => {
    const errors = await errorsOf(service, definition, { value: input }, lookup);
    expect(errors).toEqual([{ message, meta: { field: message.match(/The (?:selected )?(\S+)/)![1], rule } }]);
  });

  it('accepts null when not required, and a missing value', async () => {
    expect(await service.prepare(definition, { value: null }, { mode: 'create', lookup })).toEqual({ value: null });
    // An empty form input is no value for every type but text.
    if (!['string', 'encrypted', 'array', 'object', 'multiselect'].includes(c.type)) {
      expect(await service.prepare(definition, { value: '' }, { mode: 'create', lookup })).toEqual({ value: null });
    }
    expect(await service.prepare(definition, {}, { mode: 'create', lookup })).toEqual({});
  });

  // Only types with filter cases get this test (no skip: nothing to run for the others).
  if (c.filters || c.badFilters) it('casts filter values', () => {
    for (const [input, cast] of c.filters ?? []) expect(service.castFilterValue(definition, 'value', input)).toEqual(cast);
    for (const input of c.badFilters ?? []) {
      expect(() => service.castFilterValue(definition, 'value', input)).toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining('[value]') }));
    }
  });

  if (c.defaults) it('applies config.default on create only', async () => {
    for (const [fallback, expected] of c.defaults ?? []) {
      const withDefault = stream('things', { value: { type: c.type, config: { ...(c.config ?? {}), default: fallback } } });
      const svc = makeService([withDefault]);
      const out = await svc.prepare(withDefault, {}, { mode: 'create', lookup });
      if (typeof expected === 'function') expect((expected as (v: unknown) => boolean)(out.value)).toBe(true);
      else expect(out.value).toEqual(expected);
      const patched = await svc.prepare(withDefault, {}, { mode: 'patch', lookup, existing: {} });
      expect(patched).toEqual({});
    }
  });
});

describe('hash', () => {
  const definition = stream('users', { password: { type: 'hash', protected: true }, pin: 'hash' });
  const service = makeService([definition]);
  const lookup = new MemoryLookup();

  it('stores a scrypt PHC string, verifies it, never re-hashes, never serializes a protected hash', async () => {
    const out = await service.prepare(definition, { password: 'correct horse', pin: '1234' }, { mode: 'create', lookup });
    expect(out.password).toMatch(/^\$scrypt\$ln=\d+,r=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(isHashed(out.password)).toBe(true);
    expect(await verifyHash('correct horse', out.password as string)).toBe(true);
    expect(await verifyHash('wrong', out.password as string)).toBe(false);
    const again = await service.prepare(definition, { password: out.password }, { mode: 'create', lookup });
    expect(again.password).toBe(out.password);
    const bcrypt = '$2y$10$abcdefghijklmnopqrstuuJ1vPzK0vQeQ0a9E7mUu6W2U5b0xV8hW';
    expect((await service.prepare(definition, { pin: bcrypt }, { mode: 'create', lookup })).pin).toBe(bcrypt);
    expect(service.serialize(definition, out)).toEqual({ pin: out.pin });
  });
});

describe('relationship and polymorphic', () => {
  const authors = stream('authors', { id: 'integer', name: 'string' });
  const tags = stream('tags', { id: 'string' });
  const books = stream('books', {
    id: 'integer',
    author_id: { type: 'relationship', config: { related: 'authors' } },
    writer: { type: 'relationship', config: { related: 'authors', relation: 'penned_by' } },
    tag_ids: { type: 'relationship', config: { related: 'tags', multiple: true } },
    subject: { type: 'polymorphic' },
  });
  const service = makeService([authors, tags, books]);
  const lookup = new MemoryLookup({ authors: [{ id: 1 }, { id: 2 }], tags: [{ id: 'sf' }, { id: 'classic' }] });

  it('casts keys by the related key type and accepts existing entries', async () => {
    const out = await service.prepare(books, { author_id: '1', tag_ids: ['sf', 'classic'], subject: { '@stream': 'authors', id: '2' } }, { mode: 'create', lookup });
    expect(out).toEqual({ author_id: 1, tag_ids: ['sf', 'classic'], subject: { '@stream': 'authors', id: 2 } });
  });

  it('answers 409 for a key with no entry, one element per missing item', async () => {
    const errors = await errorsOf(service, books, { author_id: 7, tag_ids: ['sf', 'nope'], subject: { '@stream': 'tags', id: 'gone' } }, lookup);
    expect(errors).toEqual([
      { message: 'The selected author id is invalid.', meta: { field: 'author_id', rule: 'exists' } },
      { message: 'The selected tag ids.1 is invalid.', meta: { field: 'tag_ids.1', rule: 'exists' } },
      { message: 'The selected subject is invalid.', meta: { field: 'subject', rule: 'exists' } },
    ]);
  });

  it('rejects values of the wrong shape', async () => {
    const errors = await errorsOf(service, books, { author_id: { x: 1 }, subject: { id: 1 } }, lookup);
    expect(errors.map((e) => e.meta)).toEqual([
      { field: 'author_id', rule: 'relationship' },
      { field: 'subject.@stream', rule: 'required' },
    ]);
  });

  it('exposes relations and links', () => {
    expect(service.relations(books)).toEqual([
      { handle: 'author_id', relation: 'author', stream: 'authors', keyName: 'id', multiple: false },
      { handle: 'writer', relation: 'penned_by', stream: 'authors', keyName: 'id', multiple: false },
      { handle: 'tag_ids', relation: 'tag_ids', stream: 'tags', keyName: 'id', multiple: true },
    ]);
    expect(service.links(books, { author_id: 1, tag_ids: ['sf'], subject: { '@stream': 'tags', id: 'a b' } })).toEqual({
      author_id: 'streams/authors/entries/1',
      subject: 'streams/tags/entries/a%20b',
    });
    expect(service.castFilterValue(books, 'author_id', '2')).toBe(2);
  });

  it('reports a relationship without related at load', () => {
    const bad = stream('bad', { owner: { type: 'relationship', config: {} } });
    expect(service.check(bad)).toEqual([{ path: '/fields/0/config', message: expect.stringContaining('needs config.related') }]);
  });
});

describe('array and object shapes from other streams', () => {
  const address = stream('addresses', { street: { type: 'string', required: true }, zip: { type: 'integer' } });
  const people = stream('people', {
    homes: { type: 'array', config: { stream: 'addresses' } },
    inline: { type: 'array', config: { stream: { fields: { n: 'integer' } } } },
    mixed: { type: 'array', config: { items: [{ type: 'integer' }, { type: 'email' }] } },
    place: { type: 'object', config: { allowed: [{ stream: 'addresses' }] } },
    anything: { type: 'object', config: { allowed: [{ generic: 'App\\Thing' }] } },
  });
  const service = makeService([address, people]);
  const lookup = new MemoryLookup();

  it('validates and casts items by the stream and item definitions', async () => {
    expect(service.check(people)).toEqual([]);
    const out = await service.prepare(
      people,
      { homes: [{ street: 'Main', zip: '123' }], inline: [{ n: '4' }], mixed: ['5', 'a@b.co'], place: { street: 'X', zip: '9' }, anything: { z: 1 } },
      { mode: 'create', lookup },
    );
    expect(out).toEqual({ homes: [{ street: 'Main', zip: 123 }], inline: [{ n: 4 }], mixed: [5, 'a@b.co'], place: { street: 'X', zip: 9 }, anything: { z: 1 } });
  });

  it('reports nested failures with their paths', async () => {
    const errors = await errorsOf(service, people, { homes: [{ zip: 'x' }], mixed: [true], place: { zip: 1 } }, lookup);
    expect(errors).toEqual([
      { message: 'The homes.0.street field is required.', meta: { field: 'homes.0.street', rule: 'required' } },
      { message: 'The homes.0.zip field must be an integer.', meta: { field: 'homes.0.zip', rule: 'integer' } },
      { message: 'The mixed.0 field must be one of the allowed kinds of item.', meta: { field: 'mixed.0', rule: 'array' } },
      { message: 'The place field must match one of its allowed shapes.', meta: { field: 'place', rule: 'allowed' } },
    ]);
  });

  it('accepts a shape stream that loads later, and validates with it once it exists', async () => {
    const known = new Map<string, ReturnType<typeof stream>>();
    const later = makeServiceWith(known);
    const orders = stream('orders', { lines: { type: 'array', config: { stream: 'lines' } } });
    known.set('orders', orders);
    expect(later.check(orders)).toEqual([]);
    expect((await later.prepare(orders, { lines: [{ qty: 'x' }] }, { mode: 'create', lookup })).lines).toEqual([{ qty: 'x' }]);
    known.set('lines', stream('lines', { qty: 'integer' }));
    expect(await errorsOf(later, orders, { lines: [{ qty: 'x' }] }, lookup)).toEqual([
      { message: 'The lines.0.qty field must be an integer.', meta: { field: 'lines.0.qty', rule: 'integer' } },
    ]);
  });
});

describe('nested protected fields and trees', () => {
  it('drops protected properties inside objects and stream-shaped items on read', async () => {
    const accounts = stream('accounts', { login: 'string', token: { type: 'string', protected: true } });
    const users = stream('users', {
      profile: { type: 'object', config: { properties: { name: 'string', pin: { type: 'string', protected: true } } } },
      accounts: { type: 'array', config: { stream: 'accounts' } },
    });
    const service = makeService([accounts, users]);
    const stored = await service.prepare(users, { profile: { name: 'Ann', pin: '1234' }, accounts: [{ login: 'ann', token: 't' }] }, { mode: 'create', lookup: new MemoryLookup() });
    expect(stored).toEqual({ profile: { name: 'Ann', pin: '1234' }, accounts: [{ login: 'ann', token: 't' }] });
    expect(service.serialize(users, stored)).toEqual({ profile: { name: 'Ann' }, accounts: [{ login: 'ann' }] });
  });

  it('compiles a stream whose items are entries of itself (one level checked)', async () => {
    const nodes = stream('nodes', { name: { type: 'string', required: true }, children: { type: 'array', config: { stream: 'nodes' } } });
    const service = makeService([nodes]);
    expect(service.check(nodes)).toEqual([]);
    expect(await errorsOf(service, nodes, { name: 'root', children: [{ children: [] }] })).toEqual([
      { message: 'The children.0.name field is required.', meta: { field: 'children.0.name', rule: 'required' } },
    ]);
  });
});
