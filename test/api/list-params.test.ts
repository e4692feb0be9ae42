import { describe, expect, it } from 'vitest';
import { parseListQuery } from '../../plugins/api/index.js';
import { ListQueryCache, parseSteps, withPage } from '../../plugins/api/list-params.js';

const defaults = { per_page: 100, max_per_page: 1000 };

describe('ListQueryCache', () => {
  it('parses a query string once: the same frozen result again, equal to parseListQuery', () => {
    const cache = new ListQueryCache(defaults);
    const text = 'where[year]=1977&constraint[year]=in&orderBy[name]=desc&per_page=5&page=2&with=moons';
    const first = cache.parse(text);
    expect(first).toEqual(parseListQuery(text, defaults));
    expect(cache.parse(text)).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.where) && Object.isFrozen(first.where[0]) && Object.isFrozen(first.where[0]!.value)).toBe(true);
    expect(Object.isFrozen(first.orderBy[0]) && Object.isFrozen(first.with)).toBe(true);
    expect(cache.parse('page=3')).toEqual({ where: [], orderBy: [], page: 3, perPage: 100 });
    expect(new ListQueryCache({ per_page: 7, max_per_page: 10 }).parse('page=3').perPage).toBe(7);
  });

  it('keeps no failure: a bad query string is refused every time', () => {
    const cache = new ListQueryCache(defaults);
    expect(() => cache.parse('page=0')).toThrow(/positive integer/);
    expect(() => cache.parse('page=0')).toThrow(/positive integer/);
  });
});

describe('entry list parameters', () => {
  it('defaults to page 1 of 100', () => {
    expect(parseListQuery('', defaults)).toEqual({ where: [], orderBy: [], page: 1, perPage: 100 });
  });

  it('parses where, constraint, orderBy and order_by in order', () => {
    const q = parseListQuery('where[year]=1977&constraint[year]=%3E%3D&where[name]=L%25&constraint[name]=like&orderBy[year]=desc&order_by[name]=ASC&per_page=5&page=2', defaults);
    expect(q).toEqual({
      where: [
        { boolean: 'and', field: 'year', operator: '>=', value: '1977' },
        { boolean: 'and', field: 'name', operator: 'LIKE', value: 'L%' },
      ],
      orderBy: [
        { field: 'year', direction: 'desc' },
        { field: 'name', direction: 'asc' },
      ],
      page: 2,
      perPage: 5,
    });
  });

  it('normalizes == and <> and case-insensitive multi-word operators', () => {
    const q = parseListQuery('where[a]=1&constraint[a]===&where[b]=2&constraint[b]=%3C%3E&where[c]=x,y&constraint[c]=not%20%20in', defaults);
    expect(q.where.map((w) => [w.operator, w.value])).toEqual([
      ['=', '1'],
      ['!=', '2'],
      ['NOT IN', ['x', 'y']],
    ]);
  });

  it('keeps 0, "" and false as values', () => {
    const q = parseListQuery('where[a]=0&where[b]=&where[c]=false', defaults);
    expect(q.where.map((w) => w.value)).toEqual(['0', '', 'false']);
  });

  it('takes arrays for IN and BETWEEN and valueless NULL constraints', () => {
    const q = parseListQuery('where[y][]=1&where[y][]=5&constraint[y]=between&constraint[deleted]=null', defaults);
    expect(q.where).toEqual([
      { boolean: 'and', field: 'y', operator: 'BETWEEN', value: ['1', '5'] },
      { boolean: 'and', field: 'deleted', operator: 'NULL', value: null },
    ]);
  });

  it('clamps per_page to max_per_page', () => {
    expect(parseListQuery('per_page=5000', defaults).perPage).toBe(1000);
  });

  it.each([
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['per_page=-1', 'per_page'],
    ['per_page=1.5', 'per_page'],
    ['where[1bad]=x', 'field name'],
    ['where[a-b]=x', 'field name'],
    ['where[a]=1&constraint[a]=REGEXP', 'operator'],
    ['where[a][$ne]=1', 'single value'],
    ['orderBy[a]=up', 'asc or desc'],
    ['constraint[a]=%3D', 'without where'],
    ['where=1', 'keyed by field'],
    ['where[y]=1&constraint[y]=between', 'exactly two'],
  ])('rejects %s (400, mentions %s)', (query, words) => {
    let error: unknown;
    try {
      parseListQuery(query, defaults);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message.toLowerCase()).toContain(words.toLowerCase());
  });
});

describe('query endpoint steps', () => {
  it('turns single-key objects into steps', () => {
    expect(parseSteps([{ where: ['year', '>', 1970] }, { orderBy: ['year', 'desc'] }, { limit: 5 }])).toEqual([
      { method: 'where', args: ['year', '>', 1970] },
      { method: 'orderBy', args: ['year', 'desc'] },
      { method: 'limit', args: [5] },
    ]);
  });

  it.each([
    [{ create: [{ id: 1 }] }],
    [{ save: [] }],
    [{ delete: [] }],
    [{ truncate: [] }],
  ])('refuses write method %o', (step) => {
    expect(() => parseSteps([step])).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('refuses shapes that are not single-key objects, and $ keys in arguments', () => {
    for (const bad of [{}, 'where', [1], [{ a: 1, b: 2 }], [{ 'bad-name': [] }], [{ where: ['a', { $ne: 1 }] }]]) {
      expect(() => parseSteps(bad), JSON.stringify(bad)).toThrow(expect.objectContaining({ status: 400 }));
    }
  });
});

describe('pagination links', () => {
  it('keep every other parameter and replace page', () => {
    expect(withPage('where%5Ba%5D=1&page=3&per_page=2', 4)).toBe('where%5Ba%5D=1&per_page=2&page=4');
    expect(withPage('', 1)).toBe('page=1');
  });
});
