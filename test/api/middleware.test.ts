import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { API } from '../../plugins/api/index.js';
import type { HttpReply } from '../../plugins/http/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

const streams = { planets: { name: 'Planets', fields: { id: 'integer', name: 'string' } } };
const data = { planets: [{ id: 1, name: 'Tatooine' }, { id: 2, name: 'Hoth' }] };
const TOKEN = 'correct-horse-battery-staple';

describe('built-in middleware', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    delete process.env.TEST_API_TOKENS;
  });

  describe('auth.bearer', () => {
    it('answers 401 with WWW-Authenticate without or with a wrong token, and passes a right one', async () => {
      app = await startApp({ streams, data, config: { api: { middleware: ['auth.bearer'], auth: { tokens: [TOKEN] } } } });
      const none = await app.request('GET', '/api/streams/planets/entries');
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer realm="streams"');
      expect(none.json).toMatchObject({ errors: [{ message: 'Unauthenticated.' }], data: null });
      const wrong = await app.request('GET', '/api/streams/planets/entries', undefined, { authorization: 'Bearer nope-nope-nope' });
      expect(wrong.status).toBe(401);
      expect(wrong.headers['www-authenticate']).toBe('Bearer realm="streams", error="invalid_token"');
      const basic = await app.request('GET', '/api/streams/planets/entries', undefined, { authorization: `Basic ${TOKEN}` });
      expect(basic.status).toBe(401);
      const ok = await app.request('GET', '/api/streams/planets/entries', undefined, { authorization: `Bearer ${TOKEN}`, accept: 'application/json' });
      expect(ok.status).toBe(200);
      // 404s under the prefix are behind the middleware too.
      expect((await app.request('GET', '/api/unknown')).status).toBe(401);
      // Outside the API prefix nothing is required.
      expect((await app.request('GET', '/healthz')).status).toBe(200);
    });

    it('reads tokens from the environment variable api.auth.tokens_env', async () => {
      process.env.TEST_API_TOKENS = 'first-token-123, second-token-456';
      app = await startApp({ streams, config: { api: { middleware: ['auth.bearer'], auth: { tokens_env: 'TEST_API_TOKENS', realm: 'rebels' } } } });
      expect((await app.request('GET', '/api/streams', undefined, { authorization: 'Bearer second-token-456' })).status).toBe(200);
      const denied = await app.request('GET', '/api/streams', undefined, { authorization: 'Bearer third' });
      expect(denied.status).toBe(401);
      expect(denied.headers['www-authenticate']).toContain('realm="rebels"');
    });

    it('refuses everything when no token is configured', async () => {
      app = await startApp({ streams, config: { api: { middleware: ['auth.bearer'], auth: { tokens_env: 'TEST_API_TOKENS_UNSET' } } } });
      expect((await app.request('GET', '/api/streams', undefined, { authorization: 'Bearer anything-at-all' })).status).toBe(401);
    });

    it('runs before the gate, so a custom gate sees the authenticated user', async () => {
      const seen: unknown[] = [];
      const addon = definePlugin({
        name: 'spy',
        requires: ['api'],
        register({ use }) {
          const api = use(API);
          api.middleware.register('spy', () => (request, next) => {
            seen.push(request.locals.user);
            return next();
          });
        },
      });
      app = await startApp({
        streams,
        plugins: [addon],
        config: { api: { middleware: ['auth.bearer'], auth: { tokens: [TOKEN] }, interfaces: [{ name: 'api', prefix: 'api', middleware: ['spy'] }] } },
      });
      await app.request('GET', '/api/streams', undefined, { authorization: `Bearer ${TOKEN}` });
      expect(seen).toEqual([{ type: 'token', id: expect.stringMatching(/^[0-9a-f]{12}$/) }]);
      expect(JSON.stringify(seen)).not.toContain(TOKEN);
    });
  });

  describe('throttle:N,M', () => {
    it('allows N requests per window per client, then 429 with Retry-After and X-RateLimit-*', async () => {
      app = await startApp({ streams, config: { api: { middleware: ['throttle:3,1'] } } });
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.request('GET', '/api/streams');
        expect(res.status).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        remaining.push(res.headers['x-ratelimit-remaining']!);
      }
      expect(remaining).toEqual(['2', '1', '0']);
      const limited = await app.request('GET', '/api/streams');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(Number(limited.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
      expect(limited.json).toMatchObject({ errors: [{ message: 'Too Many Attempts.' }], data: null });
    });

    it('counts per authenticated user when there is one', async () => {
      app = await startApp({
        streams,
        config: { api: { middleware: ['auth.bearer', 'throttle:1,1'], auth: { tokens: [TOKEN, 'another-token-789'] } } },
      });
      expect((await app.request('GET', '/api/streams', undefined, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      expect((await app.request('GET', '/api/streams', undefined, { authorization: `Bearer ${TOKEN}` })).status).toBe(429);
      expect((await app.request('GET', '/api/streams', undefined, { authorization: 'Bearer another-token-789' })).status).toBe(200);
    });

    it('refuses to boot with bad arguments', async () => {
      await expect(startApp({ streams, config: { api: { middleware: ['throttle:x,1'] } } })).rejects.toThrow(/throttle/);
    });
  });

  describe('cors', () => {
    const config = { api: { middleware: ['cors'], cors: { origins: ['https://app.example'] } } };

    it('answers a preflight from a configured origin with 204 and the allowed methods/headers', async () => {
      app = await startApp({ streams, config });
      const res = await app.request('OPTIONS', '/api/streams/planets/entries', undefined, {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
      });
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(res.headers['access-control-allow-methods']).toContain('POST');
      expect(res.headers['access-control-allow-headers']).toContain('Authorization');
      expect(res.headers['access-control-max-age']).toBe('600');
      expect(res.headers.vary).toBe('Origin');
    });

    it('adds Access-Control-Allow-Origin to replies for configured origins only (errors too)', async () => {
      app = await startApp({ streams, config });
      const ok = await app.request('GET', '/api/streams', undefined, { origin: 'https://app.example' });
      expect(ok.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(ok.headers['access-control-expose-headers']).toContain('ETag');
      const missing = await app.request('GET', '/api/streams/nope', undefined, { origin: 'https://app.example' });
      expect(missing.status).toBe(404);
      expect(missing.headers['access-control-allow-origin']).toBe('https://app.example');
      const other = await app.request('GET', '/api/streams', undefined, { origin: 'https://evil.example' });
      expect(other.status).toBe(200);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await app.request('OPTIONS', '/api/streams', undefined, { origin: 'https://evil.example', 'access-control-request-method': 'POST' });
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('answers * for any origin when configured so', async () => {
      app = await startApp({ streams, config: { api: { middleware: ['cors'], cors: { origins: ['*'] } } } });
      const res = await app.request('GET', '/api/streams', undefined, { origin: 'https://whoever.example' });
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });
  });

  describe('readonly', () => {
    it('lets GET and HEAD through and answers writes and the query endpoint with 405', async () => {
      app = await startApp({ streams, data, config: { api: { interfaces: [{ name: 'public', prefix: 'api', middleware: ['readonly'] }] } } });
      expect((await app.request('GET', '/api/streams/planets/entries')).status).toBe(200);
      expect((await app.request('HEAD', '/api/streams/planets/entries/1')).status).toBe(200);
      for (const [method, path] of [
        ['POST', '/api/streams/planets/entries'],
        ['PUT', '/api/streams/planets/entries/1'],
        ['PATCH', '/api/streams/planets/entries/1'],
        ['DELETE', '/api/streams/planets/entries/1'],
        ['DELETE', '/api/streams/planets'],
        ['POST', '/api/streams'],
      ] as const) {
        const res = await app.request(method, path, method === 'DELETE' ? undefined : { name: 'x' });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
        expect(res.json.errors[0].message).toBe('This interface is read-only.');
      }
      const query = await app.request('POST', '/api/streams/planets/query', { parameters: [{ where: ['id', 1] }] });
      expect(query.status).toBe(405);
      expect(query.headers.allow).toBe('OPTIONS');
      // Nothing changed.
      expect((await app.request('GET', '/api/streams/planets/entries')).json.meta.total).toBe(2);
    });
  });
});

describe('interfaces and the middleware order', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('serves several interfaces at once: a public read-only throttled one and an authenticated admin one', async () => {
    app = await startApp({
      streams,
      data,
      config: {
        api: {
          auth: { tokens: [TOKEN] },
          interfaces: [
            { name: 'public', prefix: 'api', middleware: ['throttle:100,1', 'readonly'], resources: ['entries'] },
            { name: 'admin', prefix: 'admin/api', middleware: ['auth.bearer'] },
          ],
        },
      },
    });
    const auth = { authorization: `Bearer ${TOKEN}` };
    const pub = await app.request('GET', '/api/streams/planets/entries/1');
    expect(pub.status).toBe(200);
    expect(pub.headers['x-ratelimit-limit']).toBe('100');
    expect(pub.json.links.self).toBe(`${app.url}/api/streams/planets/entries/1`);
    // The public interface does not expose the streams resource.
    expect((await app.request('GET', '/api/streams')).status).toBe(404);
    expect((await app.request('GET', '/admin/api/streams')).status).toBe(401);
    const admin = await app.request('GET', '/admin/api/streams', undefined, auth);
    expect(admin.status).toBe(200);
    expect(admin.json.links.streams).toBe(`${app.url}/admin/api/streams`);
    expect(admin.headers['x-ratelimit-limit']).toBeUndefined();
    const created = await app.request('POST', '/admin/api/streams/planets/entries', { id: 3, name: 'Dagobah' }, auth);
    expect(created.status).toBe(201);
    expect(created.json.links.location).toBe(`${app.url}/admin/api/streams/planets/entries/3`);
    expect((await app.request('GET', '/api/streams/planets/entries/3')).status).toBe(200);
  });

  it('hands a cached GET answer to middleware frozen and shared; a middleware changes it by building a new one', async () => {
    const seen: HttpReply[] = [];
    const addon = definePlugin({
      name: 'stamp',
      requires: ['api'],
      register({ use }) {
        use(API).middleware.register('stamp', () => async (_request, next) => {
          const reply = await next();
          seen.push(reply);
          return { ...reply, headers: [...(reply.headers ?? []), ['X-Stamp', String(seen.length)]] };
        });
      },
    });
    app = await startApp({ streams, data, plugins: [addon], config: { api: { middleware: ['stamp'] } } });
    const first = await app.request('GET', '/api/streams/planets/entries/1');
    const second = await app.request('GET', '/api/streams/planets/entries/1');
    const third = await app.request('GET', '/api/streams/planets/entries/1');
    expect([first.headers['x-stamp'], second.headers['x-stamp'], third.headers['x-stamp']]).toEqual(['1', '2', '3']);
    expect(third.headers.etag).toBe(first.headers.etag);
    expect(third.json).toEqual(first.json);
    // The second and third come from the reply cache: one answer object, frozen with its headers.
    expect(seen[2]).toBe(seen[1]);
    expect(Object.isFrozen(seen[2]) && Object.isFrozen(seen[2]!.headers)).toBe(true);
    expect(() => seen[2]!.headers!.push(['X-Late', 'no'])).toThrow(TypeError);
    const fresh = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'if-none-match': first.headers.etag as string });
    expect(fresh.status).toBe(304);
  });

  it('runs group, gate, interface, resource, then endpoint middleware; withoutEndpointMiddleware drops inherited ones', async () => {
    const trail: string[] = [];
    const addon = definePlugin({
      name: 'order-spy',
      requires: ['api'],
      register({ use }) {
        const api = use(API);
        for (const name of ['group', 'iface', 'resource', 'endpoint', 'gate']) {
          api.middleware.register(`spy.${name}`, () => (request, next) => {
            trail.push(`${name}:${request.api.endpoint ?? 'none'}`);
            return next();
          });
        }
        api.addResourceMiddleware('entries', 'spy.resource');
        api.addEndpointMiddleware('entries.show', 'spy.endpoint');
        api.withoutEndpointMiddleware('entries.index', 'spy.iface', 'spy.gate');
      },
    });
    app = await startApp({
      streams,
      data,
      plugins: [addon],
      config: { api: { middleware: ['spy.group'], gate_middleware: 'spy.gate', interfaces: [{ name: 'api', prefix: 'api', middleware: ['spy.iface'] }] } },
    });
    await app.request('GET', '/api/streams/planets/entries/1');
    expect(trail).toEqual(['group:entries.show', 'gate:entries.show', 'iface:entries.show', 'resource:entries.show', 'endpoint:entries.show']);
    trail.length = 0;
    await app.request('GET', '/api/streams/planets');
    expect(trail).toEqual(['group:streams.show', 'gate:streams.show', 'iface:streams.show']);
    trail.length = 0;
    await app.request('GET', '/api/streams/planets/entries');
    // The gate cannot be removed.
    expect(trail).toEqual(['group:entries.index', 'gate:entries.index', 'resource:entries.index']);
    trail.length = 0;
    const missing = await app.request('GET', '/api/whatever');
    expect(missing.status).toBe(404);
    expect(trail).toEqual(['group:none', 'gate:none', 'iface:none']);
  });

  it('marks the query endpoint as a write for middleware', async () => {
    const writes: boolean[] = [];
    const addon = definePlugin({
      name: 'write-spy',
      requires: ['api'],
      register({ use }) {
        use(API).middleware.register('spy.write', () => (request, next) => {
          writes.push(request.api.write);
          return next();
        });
      },
    });
    app = await startApp({ streams, data, plugins: [addon], config: { api: { middleware: ['spy.write'] } } });
    await app.request('GET', '/api/streams/planets/entries');
    await app.request('POST', '/api/streams/planets/query', { parameters: [] });
    await app.request('OPTIONS', '/api/streams/planets/entries');
    expect(writes).toEqual([false, true, false]);
  });

  it('lets middleware deny with its own status and decorate replies', async () => {
    const addon = definePlugin({
      name: 'tenant',
      requires: ['api'],
      register({ use }) {
        const api = use(API);
        api.middleware.register('tenant', (ctx) => async (request, next) => {
          if (request.headers['x-tenant'] !== ctx.args[0]) return api.errorReply(request, 412, 'Wrong tenant.', [['X-Why', 'tenant']]);
          const reply = await next();
          return { ...reply, headers: [...(reply.headers ?? []), ['X-Tenant', ctx.args[0]!]] };
        });
      },
    });
    app = await startApp({ streams, plugins: [addon], config: { api: { middleware: ['tenant:acme'] } } });
    const denied = await app.request('GET', '/api/streams');
    expect(denied.status).toBe(412);
    expect(denied.headers['x-why']).toBe('tenant');
    expect(denied.json).toMatchObject({ errors: [{ message: 'Wrong tenant.' }], data: null, links: { self: `${app.url}/api/streams` } });
    const ok = await app.request('GET', '/api/streams', undefined, { 'x-tenant': 'acme' });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-tenant']).toBe('acme');
  });

  it('refuses two interfaces on one prefix', async () => {
    await expect(
      startApp({ streams, config: { api: { interfaces: [{ name: 'a', prefix: 'api' }, { name: 'b', prefix: '/api/' }] } } }),
    ).rejects.toThrow(/share the prefix/);
  });
});

describe('unexpected failures', () => {
  it('answer 500 with a generic message; details stay out of the reply', async () => {
    const addon = definePlugin({
      name: 'boom',
      requires: ['api'],
      register({ use }) {
        use(API).middleware.register('boom', () => () => {
          throw new Error('database password is hunter2');
        });
      },
    });
    const app = await startApp({ streams, plugins: [addon], config: { api: { middleware: ['boom'] } } });
    try {
      const res = await app.request('GET', '/api/streams');
      expect(res.status).toBe(500);
      expect(res.json).toMatchObject({ errors: [{ message: 'Internal Server Error' }], data: null });
      expect(res.text).not.toContain('hunter2');
    } finally {
      await app.close();
    }
  });
});
