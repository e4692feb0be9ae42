import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #20 item 9: what README and docs/*.md claim is what the server does. */

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('docs claims', () => {
  it('increment (docs/fields.md): a non-key field counts up, and a refused create does not use up a key', async () => {
    app = await startApp({ streams: { tickets: { fields: { id: 'integer', number: { type: 'integer', config: { default: 'increment' } }, title: { type: 'string', required: true } } } } });
    const first = await app.request('POST', '/api/streams/tickets/entries', { title: 'a' });
    expect(first.json.data).toEqual({ id: 1, number: 1, title: 'a' });
    const refused = await app.request('POST', '/api/streams/tickets/entries', {});
    expect(refused.status).toBe(409);
    const second = await app.request('POST', '/api/streams/tickets/entries', { title: 'b' });
    expect(second.json.data).toEqual({ id: 2, number: 2, title: 'b' });
    // Concurrent creates never share a number.
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => app!.request('POST', '/api/streams/tickets/entries', { title: `c${i}` })));
    const numbers = many.map((r) => r.json.data.number as number).sort((a, b) => a - b);
    expect(numbers).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('addon errors (docs/addons.md): a listener that throws a plain error is a 500 with a request id, its message only in the log', async () => {
    const buggy = definePlugin({
      name: 'buggy-addon',
      register({ hooks }) {
        hooks.on('entry.creating', () => {
          throw new Error('secret internal detail');
        });
      },
    });
    app = await startApp({ plugins: [buggy], streams: { notes: { fields: { id: 'integer', text: 'string' } } } });
    const res = await app.request('POST', '/api/streams/notes/entries', { text: 'x' });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('secret internal detail');
    expect(res.json.errors).toEqual([{ message: 'Internal Server Error' }]);
    expect(res.headers['x-request-id']).toMatch(/\S/);
    expect((await app.request('GET', '/api/streams/notes/entries')).json.meta.total).toBe(0);
  });

  it('cors defaults (docs/configuration.md) answer a preflight', async () => {
    app = await startApp({ streams: { notes: {} }, config: { api: { middleware: ['cors'], cors: { origins: ['https://app.example'] } } } });
    const res = await app.request('OPTIONS', '/api/streams/notes/entries', undefined, { origin: 'https://app.example', 'access-control-request-method': 'POST' });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
    expect(res.headers['access-control-allow-headers']).toBe('Authorization, Content-Type, Accept, If-Match, If-None-Match, Last-Event-ID');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('definition problems of object-form fields point at the handle (docs/addons.md, docs/fields.md)', async () => {
    app = await startApp({ streams: { notes: {} } });
    const res = await app.request('POST', '/api/streams', { id: 'bad', fields: { score: { type: 'nope' } } });
    expect(res.status).toBe(409);
    expect(res.json.errors[0].meta.field).toBe('/fields/score/type');
  });
});
