import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * #20 item 5, the issue's own example: `where[ob.lat]=1.5` matches a stored nested number even
 * when `ob` declares no `properties` (a plain `object`, or a type such as a point).
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const streams = { things: { fields: { id: 'integer', ob: 'object', tag: 'string' } } };
const data = {
  things: [
    { id: 1, ob: { lat: 1.5, deep: { n: 3 }, code: '12' } },
    { id: 2, ob: { lat: 7, code: 'x' } },
  ],
};
const ids = (res: { status: number; json: { data: Array<{ id: number }> } }): number[] => {
  expect(res.status).toBe(200);
  return res.json.data.map((e) => e.id);
};

describe('dotted filters into an undeclared nested value', () => {
  it('read a number written as JSON writes it as that number', async () => {
    app = await startApp({ streams, data });
    expect(ids(await app.request('GET', '/api/streams/things/entries?where[ob.lat]=1.5'))).toEqual([1]);
    expect(ids(await app.request('GET', '/api/streams/things/entries?where[ob.deep.n]=3'))).toEqual([1]);
    expect(ids(await app.request('GET', '/api/streams/things/entries?where[ob.lat]=2&constraint[ob.lat]=>'))).toEqual([2]);
    expect(ids(await app.request('GET', '/api/streams/things/entries?where[ob.lat][]=1.5&where[ob.lat][]=7&constraint[ob.lat]=IN'))).toEqual([1, 2]);
  });

  it('leave other text as text, and LIKE patterns alone', async () => {
    app = await startApp({ streams, data });
    expect(ids(await app.request('GET', '/api/streams/things/entries?where[ob.code]=x'))).toEqual([2]);
    expect(ids(await app.request('GET', '/api/streams/things/entries?where[ob.code]=1%25&constraint[ob.code]=LIKE'))).toEqual([1]);
  });
});
