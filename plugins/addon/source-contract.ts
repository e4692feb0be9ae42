/**
 * The source contract suite: the same cases against every source, ours and an addon's.
 * Exported by `streams-kernel/testing` (issue #30 item 6), so a source type written as an
 * addon runs exactly the cases the built-in sources run:
 *
 *   import * as vitest from 'vitest';
 *   import { runSourceContract } from 'streams-kernel/testing';
 *   runSourceContract(vitest, 'rates', async () => ({ create, reopen, cleanup }), { source: { type: 'rates' } });
 *
 * The first argument is the test framework's `describe`, `it`, `expect` and `afterEach`
 * (vitest's, or jest's globals): this module imports no test framework, so a plain node
 * process can load `streams-kernel/testing`.
 *
 * `create(definition)` returns a new, empty source for the definition; `reopen`
 * (persistent sources) returns a fresh instance over the same stored data after the
 * previous instance was closed; `cleanup` removes everything.
 */
import type { Entry, OrderClause, Source, WhereClause } from '../sources/index.js';
import { compareEntries, matchesWhere } from '../sources/index.js';
import type { FieldDefinition, StreamDefinition } from '../streams/index.js';

/** The matchers the suite uses (vitest's and jest's `expect` both have them). */
export interface ContractMatchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toMatchObject(expected: object): void;
  toBeUndefined(): void;
  toHaveProperty(property: string): void;
  not: ContractMatchers;
  rejects: { toMatchObject(expected: object): Promise<void> };
}

/** The test framework the suite registers its cases with: pass `vitest` (or jest's globals). */
export interface ContractTestApi {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>): void;
  afterEach(body: () => Promise<void>): void;
  expect(actual: unknown): ContractMatchers;
}

/** A field as the streams plugin normalizes it. */
function field(handle: string, type = 'string'): FieldDefinition {
  return { handle, type, required: false, unique: false, protected: false, rules: [], config: {} };
}

/** Poll until `check` passes, up to `ms` (live sync happens "within a second", never after a sleep). */
async function eventually(check: () => Promise<unknown>, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

export interface SourceHarness {
  create(definition: StreamDefinition): Promise<Source>;
  reopen?(definition: StreamDefinition): Promise<Source>;
  cleanup(): Promise<void>;
  /**
   * Sources whose store an operator edits by hand (files): change the stored entries the
   * way an editor would, outside the source. The suite then checks live sync and that no
   * write clobbers such an edit (issue #14 item 7).
   */
  disk?: DiskEditor;
}

export interface DiskEditor {
  /** Store this whole entry by hand (create or replace). */
  write(entry: Entry): Promise<void>;
  /** Remove an entry by hand. */
  remove(key: number): Promise<void>;
}

export interface ContractOptions {
  /** Source config merged into every definition (type, format...). */
  source: Record<string, unknown>;
  /** Keys must be file names (filebase): the suite then also checks path keys are refused. */
  fileKeys?: boolean;
  /** `config.cache` of the definition (the cached wrapper must keep every case green). */
  cache?: { enabled?: boolean; ttl?: number; store?: string };
}

/** A definition for the suite's stream `films`. */
export function contractDefinition(source: Record<string, unknown>, cache?: ContractOptions['cache']): StreamDefinition {
  const config: StreamDefinition['config'] = { key_name: 'id', source: { type: 'filebase', ...source } };
  if (cache) config.cache = cache;
  return {
    id: 'films',
    name: 'films',
    config,
    fields: [
      field('id', 'integer'),
      field('title'),
      field('year', 'integer'),
      field('rating', 'decimal'),
      field('seen', 'boolean'),
      field('tags', 'array'),
      field('director'),
      field('body', 'textarea'),
    ],
    rules: {},
    routes: [],
    data: undefined,
    extra: {},
    raw: { id: 'films', name: 'films' },
    file: undefined,
  };
}

/** Seed data with edge values: 0, "", false, null, missing, arrays, mixed case, `%` and `_`. */
export const FILMS: Entry[] = [
  { id: 1, title: 'A New Hope', year: 1977, rating: 8.6, seen: true, tags: ['space', 'classic'], director: 'Lucas', body: 'x' },
  { id: 2, title: 'The Empire Strikes Back', year: 1980, rating: 8.7, seen: true, tags: ['space'], director: 'Kershner', body: 'x' },
  { id: 3, title: 'Return of the Jedi', year: 1983, rating: 8.3, seen: false, tags: [], director: 'Marquand', body: 'x' },
  { id: 4, title: '', year: 0, rating: 0, seen: false, tags: ['zero'], director: null, body: 'x' },
  { id: 5, title: '100% fun_stuff', year: 1999, rating: 6.5, tags: ['space', 'prequel'], director: 'Lucas', body: 'x' },
  { id: 10, title: 'the force awakens', year: 2015, rating: 7.8, seen: true, director: 'Abrams', body: 'x' },
  { id: 11, title: 'Rogue One', year: 2016, rating: 7.8, seen: false, tags: ['space'], body: 'x' },
];

const keysOf = (entries: Entry[]): unknown[] => entries.map((e) => e.id);


function w(field: string, operator: WhereClause['operator'], value: unknown, boolean: 'and' | 'or' = 'and'): WhereClause {
  return { boolean, field, operator, value };
}

export function runSourceContract(test: ContractTestApi, name: string, makeHarness: () => Promise<SourceHarness>, options: ContractOptions): void {
  const { describe, it, afterEach, expect } = test;
  describe(`source contract: ${name}`, () => {
    let harness: SourceHarness | undefined;
    const opened: Source[] = [];

    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close().catch(() => undefined);
      await harness?.cleanup();
      harness = undefined;
    });

    async function fresh(seed: Entry[] = []): Promise<Source> {
      harness = await makeHarness();
      const source = await harness.create(contractDefinition(options.source, options.cache));
      opened.push(source);
      await Promise.all(seed.map((e) => source.put(e.id as number, e)));
      return source;
    }

    it('creates, reads, replaces and deletes entries', async () => {
      const source = await fresh();
      expect(await source.get(1)).toBeUndefined();
      await source.put(1, { id: 1, title: 'One', year: 1 });
      expect(await source.get(1)).toMatchObject({ id: 1, title: 'One', year: 1 });
      expect(await source.get('1')).toMatchObject({ id: 1 });
      await source.put(1, { id: 1, title: 'Uno' });
      const replaced = await source.get(1);
      expect(replaced).toMatchObject({ id: 1, title: 'Uno' });
      expect(replaced).not.toHaveProperty('year');
      expect(await source.count([])).toBe(1);
      expect(await source.delete(1)).toBe(true);
      expect(await source.delete(1)).toBe(false);
      expect(await source.get(1)).toBeUndefined();
      expect(await source.count([])).toBe(0);
      expect(await source.healthy()).toBe(true);
    });

    it('hands out a new object per write (callers cache by identity)', async () => {
      const source = await fresh([FILMS[0]!]);
      const before = await source.get(1);
      await source.put(1, { ...FILMS[0]!, title: 'changed' });
      const after = await source.get(1);
      expect(after).not.toBe(before);
      expect(before!.title).toBe('A New Hope');
    });

    it('finds many keys in one call, skipping missing ones', async () => {
      const source = await fresh(FILMS);
      const found = await source.getMany([1, '3', 99, 3, 11]);
      expect(keysOf(found).sort()).toEqual([1, 11, 3].sort());
    });

    it('lists in key order by default, numeric keys numerically', async () => {
      const source = await fresh(FILMS);
      expect(keysOf(await source.query({ where: [], orderBy: [] }))).toEqual([1, 2, 3, 4, 5, 10, 11]);
    });

    const cases: Array<[string, WhereClause[], unknown[]]> = [
      ['= number', [w('year', '=', 1977)], [1]],
      ['= 0 is an ordinary value', [w('year', '=', 0)], [4]],
      ['= "" is an ordinary value', [w('title', '=', '')], [4]],
      ['= false is an ordinary value', [w('seen', '=', false)], [3, 4, 11]],
      ['= null matches null and missing', [w('director', '=', null)], [4, 11]],
      ['= scalar matches an array holding it', [w('tags', '=', 'space')], [1, 2, 5, 11]],
      ['!= excludes only equal values (missing matches)', [w('seen', '!=', true)], [3, 4, 5, 11]],
      ['< on numbers', [w('year', '<', 1980)], [1, 4]],
      ['<= on numbers', [w('year', '<=', 1980)], [1, 2, 4]],
      ['> 0', [w('rating', '>', 0)], [1, 2, 3, 5, 10, 11]],
      ['>= on decimals', [w('rating', '>=', 7.8)], [1, 2, 3, 10, 11]],
      ['> on strings compares strings only', [w('title', '>', 'R')], [3, 11, 2, 10]],
      ['LIKE prefix, case-insensitive', [w('title', 'LIKE', 'the%')], [2, 10]],
      ['LIKE is anchored', [w('title', 'LIKE', 'hope')], []],
      ['LIKE contains', [w('title', 'LIKE', '%HOPE%')], [1]],
      ['LIKE _ is one character', [w('director', 'LIKE', 'Luca_')], [1, 5]],
      ['LIKE \\ escapes % and _', [w('title', 'LIKE', '100\\% fun\\_%')], [5]],
      ['LIKE escaped _ does not match other characters', [w('title', 'LIKE', 'the\\_force%')], []],
      ['NOT LIKE (missing and null match)', [w('director', 'NOT LIKE', 'l%')], [2, 3, 4, 10, 11]],
      ['IN', [w('year', 'IN', [1977, 1983, 0])], [1, 3, 4]],
      ['IN on an array field', [w('tags', 'IN', ['classic', 'zero'])], [1, 4]],
      ['NOT IN', [w('year', 'NOT IN', [1977, 1983, 0])], [2, 5, 10, 11]],
      ['BETWEEN inclusive', [w('year', 'BETWEEN', [1980, 1999])], [2, 3, 5]],
      ['NOT BETWEEN', [w('year', 'NOT BETWEEN', [1980, 1999])], [1, 4, 10, 11]],
      ['NULL', [w('seen', 'NULL', null)], [5]],
      ['NOT NULL', [w('director', 'NOT NULL', null)], [1, 2, 3, 5, 10]],
      ['CONTAINS', [w('tags', 'CONTAINS', 'space')], [1, 2, 5, 11]],
      ['CONTAINS needs an array', [w('title', 'CONTAINS', 'Rogue One')], []],
      ['AND', [w('director', '=', 'Lucas'), w('year', '>', 1980)], [5]],
      ['OR', [w('year', '=', 1977), w('year', '=', 2016, 'or')], [1, 11]],
      [
        'AND binds tighter than OR',
        [w('director', '=', 'Lucas'), w('year', '>', 1990), w('seen', '=', true, 'or'), w('year', '<', 1980)],
        [1, 5],
      ],
      ['key field', [w('id', '>', 4)], [5, 10, 11]],
    ];

    for (const [label, where, expected] of cases) {
      it(`filters: ${label}`, async () => {
        const source = await fresh(FILMS);
        const got = keysOf(await source.query({ where, orderBy: [] }));
        expect(got).toEqual([...expected].sort((a, b) => (a as number) - (b as number)));
        // The reference semantics agree (the same filter gives the same entries everywhere).
        expect(FILMS.filter((e) => matchesWhere(where, e)).map((e) => e.id)).toEqual(got);
        expect(await source.count(where)).toBe(expected.length);
      });
    }

    it('sorts on several fields, ties in key order', async () => {
      const source = await fresh(FILMS);
      const orderBy: OrderClause[] = [
        { field: 'rating', direction: 'desc' },
        { field: 'title', direction: 'asc' },
      ];
      const got = keysOf(await source.query({ where: [], orderBy }));
      expect(got).toEqual([2, 1, 3, 11, 10, 5, 4]);
      expect(got).toEqual(keysOf([...FILMS].sort(compareEntries(orderBy, 'id'))));
      const byDirector = keysOf(await source.query({ where: [], orderBy: [{ field: 'director', direction: 'asc' }] }));
      // null and missing first, then strings; equal values in key order.
      expect(byDirector).toEqual([4, 11, 10, 2, 1, 5, 3]);
    });

    it('keeps a sort correct across writes', async () => {
      const source = await fresh(FILMS);
      const orderBy: OrderClause[] = [{ field: 'year', direction: 'desc' }];
      expect(keysOf(await source.query({ where: [], orderBy })).slice(0, 2)).toEqual([11, 10]);
      await source.put(3, { ...FILMS[2]!, year: 2030 });
      await source.put(20, { id: 20, year: 2020 });
      await source.delete(11);
      expect(keysOf(await source.query({ where: [], orderBy })).slice(0, 3)).toEqual([3, 20, 10]);
      expect(keysOf(await source.query({ where: [], orderBy: [] }))).toEqual([1, 2, 3, 4, 5, 10, 20]);
    });

    it('paginates with skip and limit; the total counts the same filters', async () => {
      const source = await fresh(FILMS);
      const where = [w('year', '>', 0)];
      const page = await source.paginate({ where, orderBy: [{ field: 'year', direction: 'asc' }], skip: 2, limit: 2 });
      expect(keysOf(page.entries)).toEqual([3, 5]);
      expect(page.total).toBe(6);
      const past = await source.paginate({ where, orderBy: [], skip: 10, limit: 2 });
      expect(past).toEqual({ entries: [], total: 6 });
      expect(keysOf(await source.query({ where: [], orderBy: [], limit: 3 }))).toEqual([1, 2, 3]);
      expect(keysOf(await source.query({ where: [], orderBy: [], skip: 5 }))).toEqual([10, 11]);
      expect(await source.query({ where: [], orderBy: [], limit: 0 })).toEqual([]);
    });

    it('answers unique checks: another entry holding a value', async () => {
      const source = await fresh(FILMS);
      expect(await source.count([w('director', '=', 'Lucas'), w('id', '!=', 1)])).toBe(1);
      expect(await source.count([w('director', '=', 'Lucas'), w('id', 'NOT IN', [1, 5])])).toBe(0);
      expect(await source.count([w('title', '=', 'rogue one')])).toBe(0);
    });

    it('survives concurrent writes: every different key lands, one key keeps the last write', async () => {
      const source = await fresh();
      await Promise.all(Array.from({ length: 60 }, (_, i) => source.put(i + 1, { id: i + 1, title: `t${i}` })));
      expect(await source.count([])).toBe(60);
      await Promise.all(Array.from({ length: 20 }, (_, i) => source.put(7, { id: 7, title: `v${i}` })));
      expect((await source.get(7))!.title).toBe('v19');
      await Promise.all([source.delete(1), source.delete(2), source.put(61, { id: 61 })]);
      expect(await source.count([])).toBe(59);
    });

    it('truncates', async () => {
      const source = await fresh(FILMS);
      await source.truncate();
      expect(await source.count([])).toBe(0);
      expect(await source.query({ where: [], orderBy: [] })).toEqual([]);
      await source.put(1, { id: 1, title: 'again' });
      expect(await source.count([])).toBe(1);
    });

    it('stores string keys and finds them', async () => {
      const source = await fresh();
      await source.put('abc-1', { id: 'abc-1', title: 'string key' });
      await source.put(2, { id: 2 });
      expect(await source.get('abc-1')).toMatchObject({ title: 'string key' });
      expect(keysOf(await source.query({ where: [], orderBy: [] }))).toEqual([2, 'abc-1']);
    });

    it('reopens with every acknowledged write', async () => {
      const h = (harness = await makeHarness());
      if (!h.reopen) {
        console.info(`[${name}] not persistent: reopen case skipped`);
        expect(h.reopen).toBeUndefined();
        return;
      }
      const definition = contractDefinition(options.source, options.cache);
      const first = await h.create(definition);
      await Promise.all(FILMS.map((e) => first.put(e.id as number, e)));
      await first.put(2, { ...FILMS[1]!, title: 'patched', rating: 0 });
      await first.delete(3);
      await first.close();
      const second = await h.reopen(definition);
      opened.push(second);
      expect(keysOf(await second.query({ where: [], orderBy: [] }))).toEqual([1, 2, 4, 5, 10, 11]);
      expect(await second.get(2)).toMatchObject({ title: 'patched', rating: 0 });
      expect(await second.get(4)).toMatchObject({ title: '', year: 0, rating: 0, seen: false, director: null, tags: ['zero'] });
      expect(await second.get(1)).toMatchObject(FILMS[0]!);
    });

    describe('edits made on disk (live sync and never clobber)', () => {
      async function withDisk(): Promise<{ source: Source; disk: DiskEditor } | undefined> {
        const source = await fresh(FILMS);
        if (!harness!.disk) {
          console.info(`[${name}] no files to edit by hand: disk-edit cases skipped`);
          expect(harness!.disk).toBeUndefined();
          return undefined;
        }
        return { source, disk: harness!.disk };
      }

      it('serves an edit, an addition and a removal made on disk while serving, and tells its listeners', async () => {
        const ready = await withDisk();
        if (!ready) return;
        const { source, disk } = ready;
        const heard: string[] = [];
        source.onExternalChange?.((changes) => {
          for (const c of changes) heard.push(`${c.entry ? (c.previous ? 'updated' : 'created') : 'deleted'} ${String(c.key)}`);
        });
        await disk.write({ ...FILMS[0]!, title: 'Edited on disk' });
        await disk.write({ id: 42, title: 'Added on disk', year: 2042 });
        await disk.remove(3);
        await eventually(async () => {
          expect(await source.get(1)).toMatchObject({ title: 'Edited on disk' });
          expect(await source.get(42)).toMatchObject({ title: 'Added on disk', year: 2042 });
          expect(await source.get(3)).toBeUndefined();
        });
        expect(keysOf(await source.query({ where: [w('year', '>', 2000)], orderBy: [] }))).toEqual([10, 11, 42]);
        expect(await source.count([])).toBe(FILMS.length);
        if (source.onExternalChange) expect(heard.sort()).toEqual(['created 42', 'deleted 3', 'updated 1']);
      });

      it('a write racing a disk edit of another entry keeps both, also after a reopen', async () => {
        const ready = await withDisk();
        if (!ready) return;
        const { source, disk } = ready;
        await disk.write({ ...FILMS[1]!, title: 'Disk' });
        await source.refresh?.(2);
        await source.put(1, { ...FILMS[0]!, title: 'API' });
        await source.refresh?.(2);
        expect(await source.get(2)).toMatchObject({ title: 'Disk' });
        expect(await source.get(1)).toMatchObject({ title: 'API' });
        if (!harness!.reopen) return;
        await source.close();
        const again = await harness!.reopen(contractDefinition(options.source, options.cache));
        opened.push(again);
        expect(await again.get(2)).toMatchObject({ title: 'Disk' });
        expect(await again.get(1)).toMatchObject({ title: 'API' });
      });

      it('a burst of writes while entries are edited on disk loses neither', async () => {
        const ready = await withDisk();
        if (!ready) return;
        const { source, disk } = ready;
        const writes = Array.from({ length: 20 }, (_, i) => source.put(100 + i, { id: 100 + i, title: `api ${i}` }));
        const edits = (async () => {
          for (let i = 0; i < 5; i++) {
            await disk.write({ ...FILMS[i]!, title: `disk ${i}` });
            await new Promise((r) => setTimeout(r, 2));
          }
        })();
        await Promise.all([...writes, edits]);
        for (let i = 0; i < 5; i++) await source.refresh?.(FILMS[i]!.id as number);
        await eventually(async () => {
          for (let i = 0; i < 5; i++) expect(await source.get(FILMS[i]!.id as number)).toMatchObject({ title: `disk ${i}` });
        });
        for (let i = 0; i < 20; i++) expect(await source.get(100 + i)).toMatchObject({ title: `api ${i}` });
        if (!harness!.reopen) return;
        await source.close();
        const again = await harness!.reopen(contractDefinition(options.source, options.cache));
        opened.push(again);
        expect(await again.count([])).toBe(FILMS.length + 20);
        for (let i = 0; i < 5; i++) expect(await again.get(FILMS[i]!.id as number)).toMatchObject({ title: `disk ${i}` });
      });
    });

    if (options.fileKeys) {
      it('refuses keys that would name a file outside the folder (400)', async () => {
        const source = await fresh();
        for (const bad of ['../evil', 'a/b', '.hidden', '..', '', 'x'.repeat(129), 'a\\b', 'é']) {
          await expect(source.put(bad, { id: bad })).rejects.toMatchObject({ status: 400 });
        }
        expect(await source.count([])).toBe(0);
      });
    }
  });
}
