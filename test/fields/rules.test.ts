import { describe, expect, it } from 'vitest';
import { errorsOf, makeService, MemoryLookup, stream } from './harness.js';

interface RuleCase {
  rules: string | string[];
  type?: string;
  valid: unknown[];
  /** value -> message (rule name is the first rule segment unless given) */
  invalid: Array<[unknown, string] | [unknown, string, string]>;
}

const cases: Record<string, RuleCase[]> = {
  string: [{ rules: 'string', type: 'object', valid: [], invalid: [[{ a: 1 }, 'The title field must be a string.']] }],
  integer: [{ rules: 'integer', valid: ['12', '-3'], invalid: [['1.5', 'The title field must be an integer.'], ['x', 'The title field must be an integer.']] }],
  numeric: [{ rules: 'numeric', valid: ['1.5', '10', '-2e3'], invalid: [['ten', 'The title field must be a number.']] }],
  boolean: [{ rules: 'boolean', valid: ['1', '0'], invalid: [['yes', 'The title field must be true or false.']] }],
  array: [{ rules: 'array', type: 'object', valid: [{ a: 1 }], invalid: [] }, { rules: 'array', type: 'array', valid: [[1]], invalid: [] }],
  email: [{ rules: 'email', valid: ['a@b.co'], invalid: [['a@', 'The title field must be a valid email address.']] }],
  url: [{ rules: 'url', valid: ['http://x.org/y'], invalid: [['x.org', 'The title field must be a valid URL.']] }],
  uuid: [{ rules: 'uuid', valid: ['0e8b3a52-3c6a-4b5b-9d2e-1f0a2b3c4d5e'], invalid: [['0e8b3a52', 'The title field must be a valid UUID.']] }],
  date: [{ rules: 'date', valid: ['2024-01-31', '2024-01-31 10:00:00'], invalid: [['2024-02-30', 'The title field must be a valid date.'], ['10:00', 'The title field must be a valid date.']] }],
  date_format: [{ rules: 'date_format:d.m.Y', valid: ['31.01.2024'], invalid: [['2024-01-31', 'The title field must match the format d.m.Y.']] }],
  min: [
    { rules: 'min:3', valid: ['abc', 'abcd'], invalid: [['ab', 'The title field must be at least 3 characters.']] },
    { rules: 'min:3', type: 'integer', valid: [3, '4'], invalid: [[2, 'The title field must be at least 3.']] },
    { rules: 'numeric|min:3', valid: ['3.5'], invalid: [['2.9', 'The title field must be at least 3.']] },
    { rules: 'min:2', type: 'array', valid: [[1, 2]], invalid: [[[1], 'The title field must have at least 2 items.']] },
  ],
  max: [
    { rules: 'max:3', valid: ['abc', 'éàü'], invalid: [['abcd', 'The title field must not be greater than 3 characters.']] },
    { rules: 'max:10', type: 'number', valid: [10, 9.5], invalid: [[10.5, 'The title field must not be greater than 10.']] },
    { rules: 'max:1', type: 'multiselect', valid: [], invalid: [] },
    { rules: 'max:1', type: 'array', valid: [['a']], invalid: [[['a', 'b'], 'The title field must not have more than 1 items.']] },
  ],
  between: [
    { rules: 'between:2,4', valid: ['ab', 'abcd'], invalid: [['a', 'The title field must be between 2 and 4 characters.']] },
    { rules: 'between:1,5', type: 'integer', valid: [1, 5], invalid: [[6, 'The title field must be between 1 and 5.']] },
  ],
  size: [
    { rules: 'size:2', valid: ['ab'], invalid: [['abc', 'The title field must be 2 characters.']] },
    { rules: 'size:2', type: 'integer', valid: [2], invalid: [[3, 'The title field must be 2.']] },
    { rules: 'size:2', type: 'array', valid: [[1, 2]], invalid: [[[1], 'The title field must contain 2 items.']] },
  ],
  in: [
    { rules: 'in:draft,live', valid: ['draft', 'live'], invalid: [['gone', 'The selected title is invalid.']] },
    { rules: 'in:1,2', type: 'integer', valid: [1, '2'], invalid: [[3, 'The selected title is invalid.']] },
  ],
  not_in: [{ rules: 'not_in:admin,root', valid: ['ann'], invalid: [['root', 'The selected title is invalid.']] }],
  regex: [
    { rules: ['regex:/^[A-Z][a-z]+$/'], valid: ['Dune'], invalid: [['dune', 'The title field format is invalid.']] },
    { rules: ['regex:/^a|b$/i'], valid: ['A'], invalid: [['c', 'The title field format is invalid.']] },
    { rules: ['regex:/^\\d{2,3}$/'], valid: ['12', '123'], invalid: [['1', 'The title field format is invalid.']] },
  ],
  not_regex: [{ rules: ['not_regex:/\\s/'], valid: ['nospace'], invalid: [['a b', 'The title field format is invalid.']] }],
  alpha: [{ rules: 'alpha', valid: ['Dune', 'Ærø'], invalid: [['R2D2', 'The title field must only contain letters.']] }],
  alpha_num: [{ rules: 'alpha_num', valid: ['R2D2'], invalid: [['R2-D2', 'The title field must only contain letters and numbers.']] }],
  alpha_dash: [{ rules: 'alpha_dash', valid: ['R2-D2_x'], invalid: [['R2 D2', 'The title field must only contain letters, numbers, dashes, and underscores.']] }],
  starts_with: [{ rules: 'starts_with:The,A', valid: ['The End', 'A Start'], invalid: [['End', 'The title field must start with one of the following: The, A.']] }],
  ends_with: [{ rules: 'ends_with:.jpg,.png', valid: ['a.png'], invalid: [['a.gif', 'The title field must end with one of the following: .jpg, .png.']] }],
  digits: [{ rules: 'digits:4', valid: ['2024', '0001'], invalid: [['202', 'The title field must be 4 digits.'], ['20a4', 'The title field must be 4 digits.']] }],
  digits_between: [{ rules: 'digits_between:2,3', valid: ['12', '123'], invalid: [['1234', 'The title field must be between 2 and 3 digits.']] }],
  distinct: [{ rules: 'distinct', type: 'array', valid: [[1, 2, '1']], invalid: [[[1, 2, 1], 'The title field has a duplicate value.']] }],
  lowercase: [{ rules: 'lowercase', valid: ['abc'], invalid: [['aBc', 'The title field must be lowercase.']] }],
  uppercase: [{ rules: 'uppercase', valid: ['ABC'], invalid: [['aBc', 'The title field must be uppercase.']] }],
  json: [{ rules: 'json', valid: ['{"a":1}'], invalid: [['{a', 'The title field must be a valid JSON string.']] }],
  ip: [{ rules: 'ip', valid: ['127.0.0.1', '::1'], invalid: [['1.2.3', 'The title field must be a valid IP address.']] }],
  gt: [{ rules: 'gt:5', type: 'integer', valid: [6], invalid: [[5, 'The title field must be greater than 5.']] }],
  lte: [{ rules: 'lte:5', type: 'integer', valid: [5], invalid: [[6, 'The title field must be less than or equal to 5.']] }],
  multiple_of: [{ rules: 'multiple_of:5', type: 'integer', valid: [10], invalid: [[12, 'The title field must be a multiple of 5.']] }],
  accepted: [{ rules: 'accepted', valid: ['yes', 'on'], invalid: [['no', 'The title field must be accepted.']] }],
  timezone: [{ rules: 'timezone', valid: ['Europe/Paris'], invalid: [['Mars/Olympus', 'The title field must be a valid timezone.']] }],
};

for (const [name, list] of Object.entries(cases)) {
  describe(`rule ${name}`, () => {
    list.forEach((c, i) => {
      const definition = stream('books', { title: { type: c.type ?? 'string', rules: Array.isArray(c.rules) ? c.rules : c.rules.split('|'), config: c.type === 'multiselect' ? { options: ['a', 'b'] } : {} } });
      const service = makeService([definition]);
      const lookup = new MemoryLookup();

      it(`#${i} compiles (${JSON.stringify(c.rules)} on ${c.type ?? 'string'})`, () => {
        expect(service.check(definition)).toEqual([]);
      });
      for (const value of c.valid) {
        it(`#${i} accepts ${JSON.stringify(value)}`, async () => {
          await expect(service.prepare(definition, { title: value }, { mode: 'create', lookup })).resolves.toBeDefined();
        });
      }
      for (const [value, message, rule] of c.invalid) {
        it(`#${i} rejects ${JSON.stringify(value)}`, async () => {
          const errors = await errorsOf(service, definition, { title: value }, lookup);
          expect(errors).toContainEqual({ message, meta: { field: 'title', rule: rule ?? name } });
        });
      }
    });
  });
}

describe('rule required and nullable', () => {
  const definition = stream('books', {
    title: { type: 'string', required: true },
    subtitle: { type: 'string', rules: ['required'] },
    tags: { type: 'array', rules: ['required'] },
    note: { type: 'string', rules: ['nullable', 'max:3'] },
  });
  const service = makeService([definition]);
  const lookup = new MemoryLookup();

  it('fails on missing, null, blank text and an empty list, one element per field', async () => {
    const errors = await errorsOf(service, definition, { subtitle: '   ', tags: [] }, lookup);
    expect(errors).toEqual([
      { message: 'The title field is required.', meta: { field: 'title', rule: 'required' } },
      { message: 'The subtitle field is required.', meta: { field: 'subtitle', rule: 'required' } },
      { message: 'The tags field is required.', meta: { field: 'tags', rule: 'required' } },
    ]);
    expect(await errorsOf(service, definition, { title: null, subtitle: 'x', tags: [1] }, lookup)).toEqual([
      { message: 'The title field is required.', meta: { field: 'title', rule: 'required' } },
    ]);
  });

  it('lets a patch leave required fields out, but not blank them', async () => {
    const existing = { title: 'A', subtitle: 'B', tags: [1] };
    expect(await service.prepare(definition, { note: 'abc' }, { mode: 'patch', lookup, existing })).toEqual({ ...existing, note: 'abc' });
    expect(await errorsOf(service, definition, { title: '' }, lookup, 'patch')).toEqual([{ message: 'The title field is required.', meta: { field: 'title', rule: 'required' } }]);
  });

  it('accepts null for a nullable field and still checks a value', async () => {
    expect((await service.prepare(definition, { title: 'a', subtitle: 'b', tags: [1], note: null }, { mode: 'create', lookup })).note).toBeNull();
    expect(await errorsOf(service, definition, { title: 'a', subtitle: 'b', tags: [1], note: 'abcd' }, lookup)).toEqual([
      { message: 'The note field must not be greater than 3 characters.', meta: { field: 'note', rule: 'max' } },
    ]);
  });
});

describe('rule unique', () => {
  const definition = stream('users', { id: 'integer', email: { type: 'email', unique: true }, nick: { type: 'string', rules: 'unique' } });
  const service = makeService([definition]);
  const lookup = new MemoryLookup({ users: [{ id: 1, email: 'ann@example.com', nick: 'ann' }] });

  it('fails when another entry of the stream has the value', async () => {
    expect(await errorsOf(service, definition, { email: 'ann@example.com', nick: 'ann' }, lookup)).toEqual([
      { message: 'The email has already been taken.', meta: { field: 'email', rule: 'unique' } },
      { message: 'The nick has already been taken.', meta: { field: 'nick', rule: 'unique' } },
    ]);
  });

  it('ignores the entry itself on update', async () => {
    const out = await service.prepare(definition, { email: 'ann@example.com' }, { mode: 'patch', key: 1, lookup, existing: { id: 1, email: 'ann@example.com', nick: 'ann' } });
    expect(out.email).toBe('ann@example.com');
    await expect(service.prepare(definition, { email: 'ann@example.com' }, { mode: 'patch', key: 2, lookup, existing: { id: 2 } })).rejects.toMatchObject({ status: 409 });
  });

  it('accepts a new value', async () => {
    expect((await service.prepare(definition, { email: 'bob@example.com' }, { mode: 'create', lookup })).email).toBe('bob@example.com');
  });
});

describe('stream-level rules and several failures', () => {
  const definition = stream(
    'books',
    { title: { type: 'string', rules: 'required' }, year: 'integer' },
    { rules: { title: ['min:3', 'alpha'], year: ['between:1900,2100'] } },
  );
  const service = makeService([definition]);

  it('applies stream rules next to field rules, one element per failed rule', async () => {
    expect(service.check(definition)).toEqual([]);
    expect(await errorsOf(service, definition, { title: 'a1', year: 1800 })).toEqual([
      { message: 'The title field must be at least 3 characters.', meta: { field: 'title', rule: 'min' } },
      { message: 'The title field must only contain letters.', meta: { field: 'title', rule: 'alpha' } },
      { message: 'The year field must be between 1900 and 2100.', meta: { field: 'year', rule: 'between' } },
    ]);
  });

  it('names stream rules for an unknown field, unknown rules and bad arguments at load', () => {
    const bad = stream('bad', { title: { type: 'string', rules: ['between:1', 'regex:/(/', 'frobnicate'] } }, { rules: { ghost: ['required'] } });
    const problems = service.check(bad);
    expect(problems[0]).toEqual({ path: '/rules/ghost', message: 'Stream [bad] has rules for [ghost], which is not one of its fields.' });
    // Every rule problem of a definition is reported at once.
    const several = stream('bad', { title: { type: 'string', rules: ['between:1', 'regex:/(/', 'frobnicate'] } });
    expect(service.check(several).map((p) => p.path)).toEqual(['/fields/0/rules/0', '/fields/0/rules/1', '/fields/0/rules/2']);
    const fieldOnly = stream('bad', { title: { type: 'string', rules: ['between:1'] } });
    expect(service.check(fieldOnly)).toEqual([{ path: '/fields/0/rules/0', message: 'Field [title] of stream [bad]: rule [between:1] needs 2 numeric arguments.' }]);
    expect(service.check(stream('bad', { title: { type: 'string', rules: ['regex:/(/'] } }))).toEqual([
      { path: '/fields/0/rules/0', message: 'Field [title] of stream [bad]: rule [regex:/(/] needs a valid RE2 regular expression (linear-time: no backreferences, lookaround or x flag).' },
    ]);
    expect(service.check(stream('bad', { title: { type: 'string', rules: ['max:3'] } }, { rules: { title: ['min:1', 'nope'] } }))).toEqual([
      { path: '/rules/title/1', message: 'Field [title] of stream [bad] has unknown rule [nope].' },
    ]);
    expect(service.check(stream('bad', { title: { type: 'string', rules: ['frobnicate'] } }))).toEqual([
      { path: '/fields/0/rules/0', message: 'Field [title] of stream [bad] has unknown rule [frobnicate].' },
    ]);
  });
});

describe('addon rules', () => {
  it('register through registerRule and compile into the stream validator', async () => {
    const service = makeService();
    service.registerRule({ name: 'even', message: 'The :attribute field must be even.', test: (value) => typeof value === 'number' && value % 2 === 0 });
    const definition = stream('numbers', { n: { type: 'integer', rules: ['even'] } });
    expect(service.check(definition)).toEqual([]);
    expect((await service.prepare(definition, { n: '4' }, { mode: 'create', lookup: new MemoryLookup() })).n).toBe(4);
    expect(await errorsOf(service, definition, { n: 3 })).toEqual([{ message: 'The n field must be even.', meta: { field: 'n', rule: 'even' } }]);
  });
});

describe('rules sometimes and present', () => {
  const definition = stream('books', { title: { type: 'string', rules: 'sometimes|required|min:2' }, note: { type: 'string', rules: 'present|nullable' } });
  const service = makeService([definition]);
  const lookup = new MemoryLookup();

  it('checks a sometimes field only when it is sent, and requires a present field in the payload', async () => {
    expect(await service.prepare(definition, { note: null }, { mode: 'create', lookup })).toEqual({ note: null });
    expect(await errorsOf(service, definition, { title: '' }, lookup)).toEqual([
      { message: 'The title field is required.', meta: { field: 'title', rule: 'required' } },
      { message: 'The note field must be present.', meta: { field: 'note', rule: 'present' } },
    ]);
  });
});
