import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { API, ApiGate, type ApiRequest } from '../../plugins/api/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

const streams = { planets: { name: 'Planets', fields: { id: 'integer', name: 'string' } }, people: { name: 'People', fields: { id: 'integer' } } };

describe('the gate (api.gate)', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('lets every API route through by default', async () => {
    app = await startApp({ streams });
    expect((await app.request('GET', '/api/streams')).status).toBe(200);
  });

  it('denies every API route with 404 "Not Found" when api.enabled is false, 404/405/OPTIONS included', async () => {
    app = await startApp({ streams, config: { api: { enabled: false } } });
    for (const [method, path] of [
      ['GET', '/api/streams'],
      ['GET', '/api/streams/planets'],
      ['POST', '/api/streams/planets/entries'],
      ['GET', '/api/nothing/here'],
      ['DELETE', '/api/streams'],
      ['OPTIONS', '/api/streams'],
      ['POST', '/api/streams/planets/query'],
    ] as const) {
      const res = await app.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json).toMatchObject({ errors: [{ message: 'Not Found' }], data: null });
      expect(res.headers.allow).toBeUndefined();
    }
    expect((await app.request('GET', '/healthz')).status).toBe(200);
    expect((await app.request('GET', '/readyz')).status).not.toBe(404);
  });

  it('uses gate_status and gate_message', async () => {
    app = await startApp({ streams, config: { api: { enabled: false, gate_status: 403, gate_message: 'API closed.' } } });
    const res = await app.request('GET', '/api/streams');
    expect(res.status).toBe(403);
    expect(res.json.errors).toEqual([{ message: 'API closed.' }]);
    expect(res.json.links.self).toBe(`${app.url}/api/streams`);
  });

  it('without gate_message the denial says what its status says (403: Forbidden, not "Not Found")', async () => {
    app = await startApp({ streams, config: { api: { enabled: false, gate_status: 403 } } });
    const res = await app.request('GET', '/api/streams');
    expect(res.status).toBe(403);
    expect(res.json.errors).toEqual([{ message: 'Forbidden' }]);
    await app.close();
    app = await startApp({ streams, config: { api: { enabled: false } } });
    expect((await app.request('GET', '/api/streams')).json.errors).toEqual([{ message: 'Not Found' }]);
  });

  it('exempts gate_except paths (Laravel Str::is patterns, * spans segments)', async () => {
    app = await startApp({ streams, config: { api: { enabled: false, gate_except: ['api/streams/planets/*', '/api/streams/people'] } } });
    expect((await app.request('GET', '/api/streams/planets/entries')).status).toBe(200);
    expect((await app.request('GET', '/api/streams/planets/entries/1')).status).toBe(404);
    expect((await app.request('GET', '/api/streams/people')).status).toBe(200);
    // The pattern needs the trailing part: the stream itself and other streams stay gated.
    const planet = await app.request('GET', '/api/streams/planets');
    expect(planet.status).toBe(404);
    expect(planet.json.errors[0].message).toBe('Not Found');
    expect((await app.request('GET', '/api/streams/people/entries')).status).toBe(404);
    expect((await app.request('GET', '/api/streams')).status).toBe(404);
  });

  it('can be replaced by an addon gate that subclasses ApiGate and calls super.shouldEnable', async () => {
    class HeaderGate extends ApiGate {
      override shouldEnable(request: ApiRequest): boolean {
        return super.shouldEnable(request) === true && request.headers['x-team'] === 'rebels';
      }
    }
    const addon = definePlugin({
      name: 'header-gate',
      requires: ['api'],
      register({ use }) {
        use(API).middleware.register('team.gate', (ctx) => new HeaderGate(ctx.config));
      },
    });
    app = await startApp({ streams, plugins: [addon], config: { api: { gate_middleware: 'team.gate', gate_status: 403 } } });
    expect((await app.request('GET', '/api/streams')).status).toBe(403);
    expect((await app.request('GET', '/api/streams', undefined, { 'x-team': 'rebels' })).status).toBe(200);
    await app.close();
    // super.shouldEnable still honours api.enabled.
    app = await startApp({ streams, plugins: [addon], config: { api: { gate_middleware: 'team.gate', enabled: false } } });
    expect((await app.request('GET', '/api/streams', undefined, { 'x-team': 'rebels' })).status).toBe(404);
  });

  it('may answer asynchronously', async () => {
    class SlowGate extends ApiGate {
      override async shouldEnable(request: ApiRequest): Promise<boolean> {
        await new Promise((r) => setTimeout(r, 5));
        return request.api.relativePath !== 'api/streams/people';
      }
    }
    const addon = definePlugin({
      name: 'slow-gate',
      requires: ['api'],
      register({ use }) {
        use(API).middleware.register('api.gate', (ctx) => new SlowGate(ctx.config), { replace: true });
      },
    });
    app = await startApp({ streams, plugins: [addon] });
    expect((await app.request('GET', '/api/streams/planets')).status).toBe(200);
    expect((await app.request('GET', '/api/streams/people')).status).toBe(404);
  });

  it('refuses to boot with an unknown gate or middleware name', async () => {
    await expect(startApp({ streams, config: { api: { gate_middleware: 'nope' } } })).rejects.toThrow(/unknown middleware "nope"/);
    await expect(startApp({ streams, config: { api: { middleware: ['auth.nope'] } } })).rejects.toThrow(/unknown middleware "auth.nope"/);
  });
});
