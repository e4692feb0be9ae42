import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** #14 item 5: documented behaviour that did not hold. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('documented behaviour holds', () => {
  it('PUT of a self stream definition without data keeps its entries; with data replaces them', async () => {
    const inline = { config: { source: { type: 'self' } }, fields: { id: 'integer', title: 'string' }, data: [{ id: 1, title: 'one' }] };
    app = await startApp({ streams: { inline } });
    expect((await app.request('POST', '/api/streams/inline/entries', { title: 'two' })).status).toBe(201);
    const put = await app.request('PUT', '/api/streams/inline', { name: 'Renamed', config: { source: { type: 'self' } }, fields: { id: 'integer', title: 'string' } });
    expect(put.status).toBe(200);
    const list = await app.request('GET', '/api/streams/inline/entries');
    expect(list.json.data.map((e: { title: string }) => e.title)).toEqual(['one', 'two']);
    const replaced = await app.request('PUT', '/api/streams/inline', { config: { source: { type: 'self' } }, fields: { id: 'integer', title: 'string' }, data: [] });
    expect(replaced.status).toBe(200);
    expect((await app.request('GET', '/api/streams/inline/entries')).json.meta.total).toBe(0);
  });

  it('default: increment works on a non-key integer field', async () => {
    const tickets = { fields: { id: 'string', number: { type: 'integer', config: { default: 'increment' } }, title: 'string' } };
    app = await startApp({ streams: { tickets }, data: { tickets: [{ id: 'a', number: 41, title: 'old' }] } });
    const made = await app.request('POST', '/api/streams/tickets/entries', { id: 'b', title: 'new' });
    expect(made.status, made.text).toBe(201);
    expect(made.json.data.number).toBe(42);
    const next = await app.request('POST', '/api/streams/tickets/entries', { id: 'c', title: 'newer' });
    expect(next.json.data.number).toBe(43);
    // An explicit value is kept.
    expect((await app.request('POST', '/api/streams/tickets/entries', { id: 'd', number: 7 })).json.data.number).toBe(7);
  });

  it('a failed create does not consume an increment key', async () => {
    const notes = { fields: { id: 'integer', title: { type: 'string', rules: ['required'] } } };
    app = await startApp({ streams: { notes }, data: { notes: [{ id: 1, title: 'one' }] } });
    expect((await app.request('POST', '/api/streams/notes/entries', {})).status).toBe(409);
    expect((await app.request('POST', '/api/streams/notes/entries', {})).status).toBe(409);
    const made = await app.request('POST', '/api/streams/notes/entries', { title: 'two' });
    expect(made.status, made.text).toBe(201);
    expect(made.json.data.id).toBe(2);
  });
});
