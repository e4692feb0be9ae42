import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, type Plugin } from '../../kernel/index.js';
import { STREAM_ROUTES } from '../../plugins/stream-routes/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #13 item 3: the API surface belongs to the product; stream routes run behind its gate. */
const site: Plugin = definePlugin({
  name: 'site',
  requires: ['stream-routes'],
  register({ use }) {
    use(STREAM_ROUTES).registerHandler('App\\Page@show', ({ params }) => ({ status: 200, type: 'text/plain', body: `page ${params.id}` }));
  },
});

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const pages = { fields: { id: 'integer' }, routes: { show: { uri: '/pages/{id}', uses: 'App\\Page@show' } } };

describe('stream routes', () => {
  it('may not claim /api, /healthz, /readyz, an interface prefix or another stream\'s route (409 naming it)', async () => {
    app = await startApp({ plugins: [site], streams: { pages }, data: { pages: [{ id: 1 }] }, config: { api: { interfaces: [{ name: 'api', prefix: 'api' }, { name: 'admin', prefix: 'admin' }] } } });
    const attempts: Array<[string, RegExp]> = [
      ['/api/streams/pages/entries', /shadow "\/api"/],
      ['/{a}/{b}/{c}', /shadow "\/api"/],
      ['/healthz', /shadow "\/healthz"/],
      ['/{anything}', /shadow "\/api"/],
      ['/admin/{x}', /shadow "\/admin"/],
      ['/pages/{slug}', /collides with route "\/pages\/\{id\}" of stream \[pages\]/],
    ];
    for (const [uri, message] of attempts) {
      const res = await app.request('POST', '/api/streams', { id: 'hijack', routes: { r: { uri, uses: 'App\\Page@show' } } });
      expect(res.status, uri).toBe(409);
      expect(res.json.errors[0].message, uri).toMatch(message);
    }
    expect((await app.request('GET', '/api/streams/pages/entries/1')).status).toBe(200);
    expect((await app.request('GET', '/healthz')).status).toBe(200);
  });

  it('run behind the API middleware group and the gate', async () => {
    app = await startApp({ plugins: [site], streams: { pages }, data: { pages: [{ id: 1 }] }, config: { api: { middleware: ['auth.bearer'], auth: { tokens: ['token-12345678'] } } } });
    expect((await app.request('GET', '/pages/1')).status).toBe(401);
    const ok = await app.request('GET', '/pages/1', undefined, { authorization: 'Bearer token-12345678' });
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('page 1');
  });

  it('are closed by the gate like the API', async () => {
    app = await startApp({ plugins: [site], streams: { pages }, data: { pages: [{ id: 1 }] }, config: { api: { enabled: false } } });
    expect((await app.request('GET', '/pages/1')).status).toBe(404);
  });
});
