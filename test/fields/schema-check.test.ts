/**
 * A field type's schema (an addon's may be anything) is checked against the JSON Schema
 * meta-schema before it is compiled. Since issue #33 the fields plugin's ajv instance no longer
 * compiles that meta-schema itself (about 30 ms of every boot): the check runs a validator
 * from the ajv code cache and must report what ajv reported, word for word.
 */
import { describe, expect, it } from 'vitest';
import { errorsOf, makeService, MemoryLookup, stream } from './harness.js';

describe('a field type whose schema is not valid JSON Schema', () => {
  it('is a definition problem with ajv\'s own words, as before the check moved', () => {
    const service = makeService();
    service.registerType({ name: 'broken', schema: () => ({ type: 'strin', minLength: -1 }) });
    expect(service.check(stream('notes', { body: 'broken' }))).toEqual([
      {
        path: '/fields',
        // The text ajv's built-in validateSchema gave (captured before the change).
        message:
          'Stream [notes] cannot be compiled: schema is invalid: data/properties/body/minLength must be >= 0, data/properties/body/type must be equal to one of the allowed values, data/properties/body/type must be array, data/properties/body/type must match a schema in anyOf',
      },
    ]);
  });

  it('a valid one still compiles and validates', async () => {
    const service = makeService();
    service.registerType({ name: 'short', schema: () => ({ type: 'string', maxLength: 3 }) });
    const notes = stream('notes', { body: 'short' });
    expect(service.check(notes)).toEqual([]);
    expect((await errorsOf(service, notes, { body: 'abcd' })).map((e) => e.message)).toEqual(['The body field is invalid.']);
    await expect(service.prepare(notes, { body: 'abc' }, { mode: 'create', lookup: new MemoryLookup() })).resolves.toMatchObject({ body: 'abc' });
  });
});
