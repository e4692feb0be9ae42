import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { API } from '../../plugins/api/index.js';
import { ENTRIES } from '../../plugins/entries/index.js';
import { NOT_AT_HAND } from '../../plugins/sources/index.js';
import { TRANSPORTS } from '../http/transports.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rawHttp } from '../helpers/raw-http.js';

const streams = { planets: { name: 'Planets', fields: { id: 'integer', name: 'string' } } };
const data = { planets: [{ id: 1, name: 'Tatooine' }, { id: 2, name: 'Hoth' }] };

/**
 * A GET of an entry held in memory is answered within the transport's own call when every
 * middleware hands on next()'s promise (issue #16, GET one near the metal). These check
 * that this path answers exactly as the promise path does, for every kind of middleware.
 */
for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`replies known at once, over ${transport.name}${transport.available ? '' : ` (skipped: ${transport.skipReason})`}`, () => {
    let app: TestApp | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    const boot = (plugins: ReturnType<typeof definePlugin>[] = [], middleware: string[] = []) =>
      startApp({ streams, data, plugins, config: { http: { transport: transport.name }, api: { interfaces: [{ name: 'api', prefix: 'api', middleware }] } } });

    it('answers a cached GET with the same bytes, ETag, 304 and HEAD as the first answer', async () => {
      app = await boot();
      const first = await app.request('GET', '/api/streams/planets/entries/1');
      const again = await app.request('GET', '/api/streams/planets/entries/1');
      expect(first.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
      expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
      const unchanged = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'if-none-match': first.headers.etag! });
      expect(unchanged.status).toBe(304);
      expect(unchanged.text).toBe('');
      const head = await app.request('HEAD', '/api/streams/planets/entries/1');
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
      // A write makes a new entry object: the cached answer is never served stale.
      expect((await app.request('PATCH', '/api/streams/planets/entries/1', { name: 'Tatooine II' })).status).toBe(200);
      const changed = await app.request('GET', '/api/streams/planets/entries/1');
      expect(changed.json.data.name).toBe('Tatooine II');
      expect(changed.headers.etag).not.toBe(first.headers.etag);
      // Unknown entries and streams answer from the same path (a synchronous throw).
      const missing = await app.request('GET', '/api/streams/planets/entries/99');
      expect(missing.status).toBe(404);
      expect(missing.json.meta.stream).toBe('planets');
      expect((await app.request('GET', '/api/streams/nope/entries/1')).status).toBe(404);
    });

    it('answers a list page of entries held in memory as the promise path does: bytes, ETag, 304, filters, errors, writes', async () => {
      app = await boot();
      const entries = app.kernel.get(ENTRIES);
      const query = { where: [], orderBy: [], page: 1, perPage: 10 };
      // Held in memory: the page is at hand; asked with relations, it takes the promise path.
      expect(entries.listNow('planets', query)).toEqual(await entries.list('planets', query));
      expect(entries.listNow('planets', { ...query, with: ['moons'] })).toBe(NOT_AT_HAND);
      const first = await app.request('GET', '/api/streams/planets/entries?per_page=1&page=2');
      const again = await app.request('GET', '/api/streams/planets/entries?per_page=1&page=2');
      expect(first.status).toBe(200);
      expect(first.json.data).toEqual([{ id: 2, name: 'Hoth' }]);
      expect(again.text).toBe(first.text);
      expect(again.headers.etag).toBe(first.headers.etag);
      const unchanged = await app.request('GET', '/api/streams/planets/entries?per_page=1&page=2', undefined, { 'if-none-match': first.headers.etag! });
      expect(unchanged.status).toBe(304);
      expect((await app.request('GET', '/api/streams/planets/entries?where[name]=Tatooine')).json.data).toEqual([{ id: 1, name: 'Tatooine' }]);
      for (let i = 0; i < 2; i++) {
        const bad = await app.request('GET', '/api/streams/planets/entries?page=0');
        expect(bad.status).toBe(400);
        expect(bad.json.errors[0].message).toMatch(/page parameter/);
        expect((await app.request('GET', '/api/streams/planets/entries?orderBy[name]=sideways')).status).toBe(400);
      }
      expect((await app.request('GET', '/api/streams/nope/entries')).status).toBe(404);
      expect((await app.request('PATCH', '/api/streams/planets/entries/2', { name: 'Hoth II' })).status).toBe(200);
      const changed = await app.request('GET', '/api/streams/planets/entries?per_page=1&page=2');
      expect(changed.json.data).toEqual([{ id: 2, name: 'Hoth II' }]);
      expect(changed.headers.etag).not.toBe(first.headers.etag);
    });

    it('builds links from each request\'s own Host, whatever answer was cached for another', async () => {
      app = await boot();
      const port = new URL(app.url).port;
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `localhost:${port}`]) {
        const res = await app.request('GET', '/api/streams/planets/entries/2', undefined, { host });
        expect(res.status).toBe(200);
        expect(res.json.links.self).toBe(`http://${host}/api/streams/planets/entries/2`);
      }
    });

    it('runs every kind of middleware once, with headers it reads before and after an await', async () => {
      const seen: string[] = [];
      const addon = definePlugin({
        name: 'kinds',
        requires: ['api'],
        register({ use }) {
          const api = use(API);
          // Hands on next()'s own promise (the path with no promise), reading a header and setting one.
          api.middleware.register('plain', () => (request, next) => {
            seen.push(`plain ${request.header('x-trace') ?? '-'}`);
            request.setResponseHeader('X-Plain', 'yes');
            return next();
          });
          // Watches the reply without changing it, then hands on the same promise.
          api.middleware.register('watch', () => (request, next) => {
            const reply = next();
            // After the reply: the headers read while it was handled are still there.
            void reply.then((r) => seen.push(`watched ${r.status} ${request.headers['x-trace'] ?? '-'}`));
            return reply;
          });
          // Awaits first, then reads every header: they must still be there on uWS.
          api.middleware.register('late', () => async (request, next) => {
            await delay(5);
            seen.push(`late ${request.headers['x-trace'] ?? '-'} ${Object.keys(request.headers).includes('host')}`);
            const reply = await next();
            return { ...reply, headers: [...(reply.headers ?? []), ['X-Late', request.headers['x-trace'] ?? '-']] };
          });
        },
      });
      app = await boot([addon], ['plain', 'watch']);
      const fast = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-trace': 'abc' });
      expect(fast.status).toBe(200);
      expect(fast.headers['x-plain']).toBe('yes');
      await delay(20);
      expect(seen).toEqual(['plain abc', 'watched 200 abc']);
      await app.close();

      seen.length = 0;
      app = await boot([addon], ['plain', 'late']);
      const slow = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-trace': 'def' });
      expect(slow.status).toBe(200);
      expect(slow.headers['x-plain']).toBe('yes');
      expect(slow.headers['x-late']).toBe('def');
      expect(seen).toEqual(['plain def', 'late def true']);
      expect(slow.json.data).toEqual(fast.json.data);
    });

    it('reads the content of a GET (GET /api/streams may carry parameters) and keeps the connection in step', async () => {
      app = await boot();
      const body = '{"ignored":true}';
      const chunked = '5\r\nhello\r\n0\r\n\r\n';
      const text = await rawHttp(
        app.url,
        `GET /api/streams/planets/entries/1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
          `GET /api/streams/planets/entries/2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}` +
          'GET /api/streams/planets/entries/1 HTTP/1.1\r\nHost: x\r\n\r\n',
        500,
      );
      expect(text.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(3);
      expect(text.indexOf('Tatooine')).toBeLessThan(text.indexOf('Hoth'));
      expect(text.lastIndexOf('Tatooine')).toBeGreaterThan(text.indexOf('Hoth'));
    });

    it('a middleware that denies or throws at once answers as on the promise path', async () => {
      const addon = definePlugin({
        name: 'deny',
        requires: ['api'],
        register({ use }) {
          const api = use(API);
          api.middleware.register('deny', () => (request, next) => (request.header('x-deny') === 'yes' ? api.errorReply(request, 403, 'Denied.') : next()));
          api.middleware.register('boom', () => (request, next) => {
            if (request.header('x-boom') === 'yes') throw new Error('boom');
            return next();
          });
        },
      });
      app = await boot([addon], ['deny', 'boom']);
      const denied = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-deny': 'yes' });
      expect(denied.status).toBe(403);
      expect(denied.json.errors).toEqual([{ message: 'Denied.' }]);
      const failed = await app.request('GET', '/api/streams/planets/entries/1', undefined, { 'x-boom': 'yes' });
      expect(failed.status).toBe(500);
      expect(failed.json.errors).toEqual([{ message: 'Internal Server Error' }]);
      expect((await app.request('GET', '/api/streams/planets/entries/1')).status).toBe(200);
    });
  });
}
