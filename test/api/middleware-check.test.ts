// The synchronous form of a middleware (`check`, issue #33): used in place of `handle` only when
// every middleware of a route has one and the same class declares both; it decides exactly as
// the chain would (pass, answer, throw, or decide later), on real servers of both transports.
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, definePlugin } from '../../kernel/index.js';
import { API, ApiGate, checkMiddleware, type ApiRequest, type Middleware, type MiddlewareHandler, type MiddlewareRegistry, type Next } from '../../plugins/api/index.js';
import type { HttpReply } from '../../plugins/http/index.js';
import { TRANSPORTS } from '../http/transports.js';
import { startApp, type TestApp } from '../helpers/app.js';

const streams = { planets: { name: 'Planets', fields: { id: 'integer', name: 'string' } } };
const data = { planets: [{ id: 1, name: 'Hoth' }] };

/** What each form of a middleware was asked, by name. */
const calls: Record<string, number> = {};
const count = (name: string): void => {
  calls[name] = (calls[name] ?? 0) + 1;
};

/** An error answer in the API envelope (the test app checks every answer against the OpenAPI document). */
const envelope = (message: string): string => JSON.stringify({ errors: [{ message }], links: {}, meta: {}, data: null });

/** A middleware offering both forms: `x-verdict` picks its decision (pass, teapot, later, throw). */
class Probe implements MiddlewareHandler {
  handle(request: ApiRequest, next: Next): HttpReply | Promise<HttpReply> {
    count('handle');
    const verdict = this.decide(request);
    if (verdict === undefined) return next();
    return verdict instanceof Promise ? verdict.then((reply) => reply ?? next()) : verdict;
  }

  check(request: ApiRequest): HttpReply | undefined | Promise<HttpReply | undefined> {
    count('check');
    return this.decide(request);
  }

  private decide(request: ApiRequest): HttpReply | undefined | Promise<HttpReply | undefined> {
    switch (request.header('x-verdict')) {
      case 'teapot':
        return { status: 403, body: envelope('Answered by the probe.') };
      case 'later':
        return new Promise((resolve) => setImmediate(() => resolve({ status: 401, body: envelope('Answered later by the probe.') })));
      case 'later-pass':
        return new Promise((resolve) => setImmediate(() => resolve(undefined)));
      case 'throw':
        throw new AppError(403, 'Thrown by the probe.');
      default:
        return undefined;
    }
  }
}

/** A gate subclass that overrides `handle` only: its `handle` must keep running. */
class StampingGate extends ApiGate {
  override handle(request: ApiRequest, next: Next): HttpReply | Promise<HttpReply> {
    count('stamp');
    request.setResponseHeader('x-stamped', 'yes');
    return super.handle(request, next);
  }
}

function addon(extra: (registry: MiddlewareRegistry) => void) {
  return definePlugin({
    name: 'probe',
    requires: ['api'],
    register({ use }) {
      const registry = use(API).middleware;
      registry.register('probe', () => new Probe());
      extra(registry);
    },
  });
}

for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`middleware with a synchronous form, over ${transport.name}${transport.available ? '' : ` (skipped: ${transport.skipReason})`}`, () => {
    let app: TestApp | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
      for (const name of Object.keys(calls)) delete calls[name];
    });

    it('runs `check` instead of `handle` when every middleware of the route has one, deciding as the chain would', async () => {
      app = await startApp({ streams, data, plugins: [addon(() => {})], config: { http: { transport: transport.name }, api: { middleware: ['probe'] } } });
      const passed = await app.request('GET', '/api/streams/planets/entries/1');
      expect(passed.status).toBe(200);
      expect(passed.json.data).toEqual({ id: 1, name: 'Hoth' });
      // Asked again: the reply cache's answer, through the same checks.
      expect((await app.request('GET', '/api/streams/planets/entries/1')).status).toBe(200);
      expect(calls).toEqual({ check: 2 });

      const teapot = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-verdict': 'teapot' });
      expect(teapot.status).toBe(403);
      expect(teapot.json.errors).toEqual([{ message: 'Answered by the probe.' }]);
      const later = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-verdict': 'later' });
      expect(later.status).toBe(401);
      expect(later.json.errors).toEqual([{ message: 'Answered later by the probe.' }]);
      const laterPass = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-verdict': 'later-pass' });
      expect(laterPass.status).toBe(200);
      expect(laterPass.json.data.name).toBe('Hoth');
      const thrown = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-verdict': 'throw' });
      expect(thrown.status).toBe(403);
      expect(thrown.json.errors).toEqual([{ message: 'Thrown by the probe.' }]);
      // A write and a miss take the same path.
      expect((await app.request('POST', '/api/streams/planets/entries', { id: 2, name: 'Endor' })).status).toBe(201);
      expect((await app.request('GET', '/api/streams/planets/entries/99')).status).toBe(404);
      expect(calls).toEqual({ check: 8 });
    });

    it('runs every `handle` when one middleware of the route has no synchronous form', async () => {
      const plain: Middleware = (request, next) => {
        count('plain');
        return next();
      };
      app = await startApp({ streams, data, plugins: [addon((registry) => registry.register('plain', () => plain))], config: { http: { transport: transport.name }, api: { middleware: ['probe', 'plain'] } } });
      expect((await app.request('GET', '/api/streams/planets/entries/1')).status).toBe(200);
      expect((await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-verdict': 'teapot' })).status).toBe(403);
      expect(calls).toEqual({ handle: 2, plain: 1 });
    });

    it('keeps the `handle` of a subclass that overrides `handle` alone (the gate\'s `check` is not its own)', async () => {
      const gate = addon((registry) => registry.register('stamping.gate', (context) => new StampingGate(context.config)));
      app = await startApp({ streams, data, plugins: [gate], config: { http: { transport: transport.name }, api: { gate_middleware: 'stamping.gate' } } });
      const res = await app.request('GET', '/api/streams/planets/entries/1');
      expect(res.status).toBe(200);
      expect(res.headers['x-stamped']).toBe('yes');
      expect(calls).toEqual({ stamp: 1 });
      await app.close();
      // The gate still denies through the subclass's handle.
      app = await startApp({ streams, data, plugins: [gate], config: { http: { transport: transport.name }, api: { gate_middleware: 'stamping.gate', enabled: false } } });
      expect((await app.request('GET', '/api/streams/planets/entries/1')).status).toBe(404);
    });

    it('leaves a throttled route to the chain (its limit and its count of denials hold)', async () => {
      app = await startApp({ streams, data, plugins: [addon(() => {})], config: { http: { transport: transport.name }, api: { middleware: ['throttle:2,1', 'probe'] } } });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.request('GET', '/api/streams/planets/entries/1')).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(calls).toEqual({ handle: 2 });
    });
  });
}

describe('checkMiddleware', () => {
  it('makes the function form of a check, carrying the check, deciding as it does', async () => {
    const ok: HttpReply = { status: 200, body: '{}' };
    const denied: HttpReply = { status: 403, body: '{}' };
    const verdicts: Array<HttpReply | undefined | Promise<HttpReply | undefined>> = [undefined, denied, Promise.resolve(undefined), Promise.resolve(denied)];
    const check = (): HttpReply | undefined | Promise<HttpReply | undefined> => verdicts.shift();
    const middleware = checkMiddleware(check);
    expect(middleware.check).toBe(check);
    const request = {} as ApiRequest;
    const next = (): Promise<HttpReply> => Promise.resolve(ok);
    expect(await middleware(request, next)).toBe(ok);
    expect(middleware(request, next)).toBe(denied);
    expect(await middleware(request, next)).toBe(ok);
    expect(await middleware(request, next)).toBe(denied);
    const throwing = checkMiddleware(() => {
      throw new AppError(401, 'No.');
    });
    expect(() => throwing(request, next)).toThrow('No.');
  });
});
