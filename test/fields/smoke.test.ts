import { keyStrategy } from '../../plugins/streams/keys.js';
import { describe, expect, it } from 'vitest';
import { errorsOf, makeService, MemoryLookup, stream } from './harness.js';

describe('fields service: first pass', () => {
  const books = stream('books', {
    id: 'integer',
    title: { type: 'string', required: true, rules: ['max:10'] },
    year: 'integer',
    published: 'boolean',
    email: 'email',
    kind: { type: 'select', config: { options: { novel: 'Novel', essay: 'Essay' } } },
    secret: { type: 'string', protected: true },
    author_id: { type: 'relationship', config: { related: 'authors' } },
  });
  const authors = stream('authors', { id: 'integer', name: 'string' });
  const service = makeService([books, authors]);
  const lookup = new MemoryLookup({ authors: [{ id: 1, name: 'Ann' }] });

  it('has no definition problems', () => {
    expect(service.check(books)).toEqual([]);
  });

  it('validates, normalizes and casts', async () => {
    const out = await service.prepare(books, { title: 'Dune', year: '1965', published: 'yes', kind: 'novel', author_id: '1' }, { mode: 'create', lookup });
    expect(out).toEqual({ title: 'Dune', year: 1965, published: true, kind: 'novel', author_id: 1 });
  });

  it('reports one element per failed rule', async () => {
    const errors = await errorsOf(service, books, { year: 'abc', email: 'nope', kind: 'poem', author_id: 9 }, lookup);
    expect(errors).toEqual([
      { message: 'The title field is required.', meta: { field: 'title', rule: 'required' } },
      { message: 'The year field must be an integer.', meta: { field: 'year', rule: 'integer' } },
      { message: 'The email field must be a valid email address.', meta: { field: 'email', rule: 'email' } },
      { message: 'The selected kind is invalid.', meta: { field: 'kind', rule: 'in' } },
      { message: 'The selected author id is invalid.', meta: { field: 'author_id', rule: 'exists' } },
    ]);
    const more = await errorsOf(service, books, { title: 'A very long title', author_id: 9 }, lookup);
    expect(more).toEqual([
      { message: 'The title field must not be greater than 10 characters.', meta: { field: 'title', rule: 'max' } },
      { message: 'The selected author id is invalid.', meta: { field: 'author_id', rule: 'exists' } },
    ]);
    const missing = await errorsOf(service, books, { title: 'Ok', author_id: 9 }, lookup);
    expect(missing).toEqual([{ message: 'The selected author id is invalid.', meta: { field: 'author_id', rule: 'exists' } }]);
  });

  it('serializes without protected fields and casts filters', () => {
    expect(service.serialize(books, { id: 1, title: 'x', secret: 's' })).toEqual({ id: 1, title: 'x' });
    expect(service.castFilterValue(books, 'year', '4')).toBe(4);
    expect(service.castFilterValue(books, 'published', 'true')).toBe(true);
    expect(() => service.castFilterValue(books, 'year', 'abc')).toThrow(/year/);
    expect(service.relations(books)).toEqual([{ handle: 'author_id', relation: 'author', stream: 'authors', keyName: 'id', multiple: false }]);
    expect(service.links(books, { author_id: 1 })).toEqual({ author_id: 'streams/authors/entries/1' });
    expect(keyStrategy(books)).toBe('increment');
  });
});
