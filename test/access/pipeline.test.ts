/**
 * Issue #28 with interfaces, the gate and `readonly`: the caller is known before the gate (an
 * addon's gate can use it), `auth.bearer` means "a caller is required", `readonly` still refuses
 * writes first, and a WebSocket upgrade with a bad token is refused.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { definePlugin } from '../../kernel/index.js';
import { API, ApiGate, type ApiRequest } from '../../plugins/api/index.js';
import { Admission } from '../../plugins/realtime/admission.js';
import { bearer, LEGACY_TOKEN, startAccessApp, type AccessApp } from './fixture.js';

/** A gate that keeps authenticated callers without an author or admin role out of the admin interface (the anonymous one is auth.bearer's to refuse). */
const gate = definePlugin({
  name: 'staff-gate',
  requires: ['api'],
  register({ use }) {
    class StaffGate extends ApiGate {
      override shouldEnable(request: ApiRequest) {
        if (request.api.interface !== 'admin') return super.shouldEnable(request);
        const user = request.locals.user as { id: string | null; roles: string[] } | undefined;
        return super.shouldEnable(request) === true && user !== undefined && (user.id === null || user.roles.some((r) => r === 'author' || r === 'admin'));
      }
    }
    use(API).middleware.register('staff.gate', (ctx) => new StaffGate(ctx.config));
  },
});

let s: AccessApp;
beforeAll(async () => {
  s = await startAccessApp({
    extra: {
      plugins: [gate],
      config: {
        api: {
          auth: { tokens: [LEGACY_TOKEN] },
          gate_middleware: 'staff.gate',
          interfaces: [
            { name: 'public', prefix: 'api', middleware: ['readonly'] },
            { name: 'admin', prefix: 'admin/api', middleware: ['auth.bearer'] },
          ],
        },
      },
    },
  });
});
afterAll(async () => s?.app.close());

it('readonly refuses writes before the rules (405); the rules still narrow reads', async () => {
  expect((await s.app.request('POST', '/api/streams/posts/entries', { id: 9, author_id: 'alice' }, bearer(s.tokens.alice))).status).toBe(405);
  const res = await s.app.request('GET', '/api/streams/posts/entries');
  expect(res.json.data.map((p: { id: number }) => p.id)).toEqual([1, 3]);
});

it('auth.bearer requires a caller: the anonymous role gets 401, a JWT or a legacy token passes; the gate sees the caller', async () => {
  const anonymous = await s.app.request('GET', '/admin/api/streams/posts/entries');
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers['www-authenticate']).toBe('Bearer realm="streams"');
  expect((await s.app.request('GET', '/admin/api/streams/posts/entries', undefined, bearer(s.tokens.alice))).status).toBe(200);
  expect((await s.app.request('GET', '/admin/api/streams/posts/entries', undefined, bearer(LEGACY_TOKEN))).status).toBe(200);
  // A caller without a staff role is stopped by the gate (404 by default), before any rule.
  expect((await s.app.request('GET', '/admin/api/streams/posts/entries', undefined, bearer('reader-api-key-0123456789'))).status).toBe(404);
  // On the admin interface the rules apply all the same.
  expect((await s.app.request('POST', '/admin/api/streams/posts/entries', { id: 9, title: 'x', author_id: 'bob' }, bearer(s.tokens.alice))).status).toBe(403);
  expect((await s.app.request('POST', '/admin/api/streams/posts/entries', { id: 9, title: 'x', author_id: 'alice' }, bearer(s.tokens.alice))).status).toBe(201);
});

it('anonymous callers are counted by their address, never as one shared user (throttle, realtime caps)', () => {
  expect(Admission.clientOf({ user: { id: null, roles: ['public'], claims: {} } }, '10.0.0.1')).toBe('ip:10.0.0.1');
  expect(Admission.clientOf({ user: { id: 'alice', roles: ['author'], claims: {} } }, '10.0.0.1')).toBe('u:alice');
});

it('a WebSocket upgrade with a bad token is refused with 401', async () => {
  const status = await new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${s.app.url.replace(/^http/, 'ws')}/api/realtime`, { headers: bearer(`${s.tokens.alice.slice(0, -4)}AAAA`) });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('opened')));
    ws.once('error', () => undefined);
  });
  expect(status).toBe(401);
});
