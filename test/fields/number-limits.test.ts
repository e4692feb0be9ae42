import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Found by the acceptance probe: out-of-range JSON numbers were stored as null or with other digits. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('numbers JSON cannot carry exactly', () => {
  it('are refused with the type message instead of being stored as something else', async () => {
    app = await startApp({ streams: { planets: { fields: { id: 'integer', population: 'integer', mass: 'number' } } } });
    const send = (body: string) => app!.request('POST', '/api/streams/planets/entries', body, { 'content-type': 'application/json' });
    const infinite = await send('{"population": 1e400}');
    expect(infinite.status).toBe(409);
    expect(infinite.json.errors).toEqual([{ message: 'The population field must be an integer.', meta: { field: 'population', rule: 'integer' } }]);
    expect((await send('{"mass": -1e400}')).status).toBe(409);
    const huge = await send('{"population": 12345678901234567890}');
    expect(huge.status).toBe(409);
    expect(huge.json.errors[0].meta.field).toBe('population');
    expect((await send('{"population": 9007199254740991}')).status).toBe(201);
    expect((await app.request('GET', '/api/streams/planets/entries')).json.meta.total).toBe(1);
  });
});
