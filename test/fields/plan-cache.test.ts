/**
 * Issue #33 (boot): a stream's entry schema is compiled by ajv once, then its validator code
 * comes from the ajv code cache (kernel/ajv-code-cache.ts, its streams folder) at later boots.
 * Checks JSON Schema cannot say (rule `test`s, types' predicates) are named by index in the
 * schema and passed to the code at each call, so the schema is plain JSON. What a client sees
 * must not depend on which path ran: the same error elements (rules and messages come from the
 * schema's `x-rule`/`x-message` through ajv's verbose errors), the same stored values. Real
 * files; each run's schema is new (a random field name), so the first service compiles it
 * and the second one loads it.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errorsOf, makeService, MemoryLookup, stream } from './harness.js';

const fresh = () => `note_${randomBytes(6).toString('hex')}`;
const ajvOf = (service: object): unknown => (service as { ajvInstance?: unknown }).ajvInstance;

describe('stream plans from the ajv code cache', () => {
  it('answer as the compiled plan does, predicates included: the same errors, the same stored entry, and no ajv instance made', async () => {
    const note = fresh();
    const books = stream('books', {
      title: { type: 'string', required: true, rules: 'min:3|max:40' },
      year: { type: 'integer', rules: 'min:1450|max:2100' },
      price: { type: 'decimal', rules: 'gt:0' },
      email: 'email',
      available: 'boolean',
      published: 'date',
      code: { type: 'string', rules: 'regex:/^[A-Z]{3}$/' },
      [note]: { type: 'string', rules: 'max:5' },
    });
    const compiled = makeService([books]);
    const bad = [
      { title: 'ab', year: 'x', price: 'cheap', email: 'nope', available: 'maybe', published: 'someday', code: 'abc', [note]: 'too long' },
      { year: 1200, price: -1 },
      { title: 4, [note]: ['a'], published: '2024-02-30' },
      { title: 'Dune', year: 1965.5, code: 'ABCD' },
    ];
    const expected = [];
    for (const input of bad) expected.push(await errorsOf(compiled, books, input));
    const good = { title: 'Dune', year: '1965', price: '9.5', email: 'a@example.org', available: 'yes', published: '1965-08-01', code: 'DUN', [note]: 'ok' };
    const stored = await compiled.prepare(books, good, { mode: 'create', lookup: new MemoryLookup() });
    expect(ajvOf(compiled)).toBeDefined(); // the first plan of this schema was compiled

    const loaded = makeService([books]);
    for (let i = 0; i < bad.length; i++) expect(await errorsOf(loaded, books, bad[i]!)).toEqual(expected[i]);
    expect(await loaded.prepare(books, good, { mode: 'create', lookup: new MemoryLookup() })).toEqual(stored);
    expect(expected[0]!.length).toBeGreaterThanOrEqual(8); // every bad field named at once
    expect(expected[1]!.map((e) => e.message)).toEqual(expect.arrayContaining(['The year field must be at least 1450.', 'The price field must be greater than 0.']));
    expect(ajvOf(loaded)).toBeUndefined(); // its plan ran the cached code, with this service's predicates
  });

  it("a field's own schema (what `revive` checks a value read from a file against) comes from the cache too: a boot's load makes no ajv instance", () => {
    const option = fresh();
    const shelf = stream('shelf', { id: 'integer', kind: { type: 'select', config: { options: [option, 'other'] } }, size: { type: 'select', config: { options: [1, 2, 3] } } });
    const read = [{ id: 1, kind: option, size: '2' }, { id: 2, kind: 'unknown', size: '7' }];
    const compiled = makeService([shelf]);
    const expected = read.map((entry) => compiled.revive(shelf, entry));
    expect(expected[0]).toEqual({ entry: { id: 1, kind: option, size: 2 }, problems: [] }); // a lexical form cast
    expect(expected[1]!.problems).toHaveLength(2); // kept, and reported
    expect(ajvOf(compiled)).toBeDefined();

    const loaded = makeService([shelf]);
    expect(read.map((entry) => loaded.revive(shelf, entry))).toEqual(expected);
    expect(ajvOf(loaded)).toBeUndefined(); // before: the first `matches` built the instance and compiled
  });

  it('a type whose schema holds what JSON cannot carry is compiled every time, never cached, and still validates', async () => {
    const note = fresh();
    const first = makeService();
    first.registerType({ name: 'odd', schema: () => ({ type: 'string', 'x-note': /kept out of JSON/ }) });
    const odd = stream('odd', { [note]: { type: 'odd', rules: 'max:2' } });
    expect(await errorsOf(first, odd, { [note]: 'abc' })).toHaveLength(1);
    const second = makeService();
    second.registerType({ name: 'odd', schema: () => ({ type: 'string', 'x-note': /kept out of JSON/ }) });
    expect(await errorsOf(second, odd, { [note]: 'abc' })).toEqual(await errorsOf(first, odd, { [note]: 'abc' }));
    expect(ajvOf(second)).toBeDefined();
  });
});
