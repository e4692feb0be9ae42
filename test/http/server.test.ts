import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, Hooks } from '../../kernel/index.js';
import { completeConfig } from '../helpers/config.js';
import { createLogger } from '../../kernel/logger.js';
import type { HttpServerCore } from '../../plugins/http/server-core.js';
import { freezeReply, nodeHeadOf, uwsHeadOf } from '../../plugins/http/frozen-reply.js';
import { rawHttp } from '../helpers/raw-http.js';
import { TRANSPORTS } from './transports.js';

const raw = rawHttp;
const kept = freezeReply({ status: 200, headers: [['ETag', '"kept"']] as Array<[string, string]>, body: Buffer.from('{"kept":true}') });

// A transport without a native binary here is skipped with the loader's reason in its title.
for (const { name, create, available, skipReason } of TRANSPORTS) describe.skipIf(!available)(`${name} transport${available ? '' : ` (skipped: ${skipReason})`}`, () => {
  let server: HttpServerCore;
  let root: string;
  let base: string;
  const hooks = new Hooks();
  const handled: number[] = [];

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'http-'));
    const config = completeConfig({ http: { port: 0, max_body: 64, body_timeout_ms: 300 } }, root);
    server = create(config, createLogger('silent'), hooks);
    hooks.on('request.handled', (p) => {
      handled.push(p.status);
    });
    server.route('GET', '/items/:id', (req) => ({ status: 200, body: JSON.stringify({ id: req.params.id, q: req.query }) }));
    server.route(['POST', 'PUT'], '/items/:id', async (req) => ({ status: 201, body: JSON.stringify({ body: await req.parsedBody() ?? null }) }));
    server.route('GET', '/items/special', () => ({ status: 200, body: '{"special":true}' }));
    // The same Buffer every time, as a cached reply is (uWS writes its head as bytes then).
    const same = Buffer.from('{"same":true}');
    let tag = 1;
    server.route('GET', '/same', (req) => ({ status: 200, headers: [['ETag', `"t${req.query === 'next' ? ++tag : tag}"`]], body: same }));
    // The very same frozen reply every time, as a reply-cache hit is (node:http keeps its header list beside it).
    server.route('GET', '/kept', (req) => {
      if (req.query === 'extra') req.setResponseHeader('X-Test', 'once');
      return kept;
    });
    // A GET that reads a body: at once, and after an await (uWS looks for a GET's body only when asked).
    server.route('GET', '/echo', async (req) => ({ status: 200, body: JSON.stringify({ has: req.hasBody, body: (await req.parsedBody()) ?? null }) }));
    server.route('GET', '/echo-later', async (req) => {
      await new Promise((r) => setImmediate(r));
      return { status: 200, body: JSON.stringify({ has: req.hasBody, body: (await req.parsedBody()) ?? null }) };
    });
    server.route('*', '/mount/*', (req) => ({ status: 200, body: JSON.stringify({ path: req.path, method: req.method }) }));
    server.route('GET', '/fail', () => {
      throw new Error('secret detail');
    });
    server.route('GET', '/app-error', async () => {
      throw new AppError(418, 'short and stout');
    });
    server.route('GET', '/slow', () => new Promise((r) => setTimeout(() => r({ status: 200, body: '{"slow":true}' }), 300)));
    server.route('GET', '/headers', (req) => {
      req.setResponseHeader('X-Test', 'yes');
      return { status: 200, body: JSON.stringify({ ua: req.headers['user-agent'] ?? null, ip: req.ip }) };
    });
    await server.listen();
    base = server.url;
  });

  afterAll(async () => {
    await server.close(1000);
    rmSync(root, { recursive: true, force: true });
  });

  it('listens on an ephemeral port and reports its url', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(base).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.native).toBe(name === 'uws');
    expect(server.transport).toMatch(name === 'uws' ? /^uWebSockets\.js / : /^node:http$/);
  });

  it('routes parameters (decoded) and keeps the query string', async () => {
    const res = await request(`${base}/items/a%20b?x=1`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(await res.body.json()).toEqual({ id: 'a b', q: 'x=1' });
  });

  it('prefers a literal segment over a parameter', async () => {
    const res = await request(`${base}/items/special`);
    expect(await res.body.json()).toEqual({ special: true });
  });

  it('answers 404 with an envelope for unknown paths', async () => {
    const res = await request(`${base}/nope`);
    expect(res.statusCode).toBe(404);
    expect(await res.body.json()).toEqual({ errors: [{ message: 'Not Found' }], links: {}, meta: {}, data: null });
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const res = await request(`${base}/items/1`, { method: 'DELETE' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, POST, PUT, HEAD, OPTIONS');
    const body = (await res.body.json()) as { errors: unknown[] };
    expect(body.errors).toHaveLength(1);
  });

  it('answers OPTIONS with 204 and Allow', async () => {
    const res = await request(`${base}/items/1`, { method: 'OPTIONS' });
    expect(res.statusCode).toBe(204);
    expect(res.headers.allow).toBe('GET, POST, PUT, HEAD, OPTIONS');
    expect(await res.body.text()).toBe('');
  });

  it('serves HEAD from the GET handler with the length and no body, and keeps the connection usable', async () => {
    const get = await request(`${base}/items/7`);
    const bytes = (await get.body.text()).length;
    const head = await request(`${base}/items/7`, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(bytes));
    expect(await head.body.text()).toBe('');
    const text = await raw(server.port, 'HEAD /items/7 HTTP/1.1\r\nHost: x\r\n\r\nGET /items/8 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(text.match(/^content-length: /gim)).toHaveLength(2);
    expect(text).toContain('{"id":"8"');
  });

  it('routes every method of a prefix route, including the bare prefix', async () => {
    const a = await request(`${base}/mount/x/y`, { method: 'PATCH' });
    expect(await a.body.json()).toEqual({ path: '/mount/x/y', method: 'PATCH' });
    const b = await request(`${base}/mount`);
    expect(await b.body.json()).toEqual({ path: '/mount', method: 'GET' });
  });

  it('parses JSON and form bodies (brackets nest, arrays append)', async () => {
    const json = await request(`${base}/items/1`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect(json.statusCode).toBe(201);
    expect(await json.body.json()).toEqual({ body: { a: 1 } });
    const form = await request(`${base}/items/1`, {
      method: 'PUT',
      body: 'a[b]=c&l[]=x&l[]=y&s=hello+world',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(await form.body.json()).toEqual({ body: { a: { b: 'c' }, l: ['x', 'y'], s: 'hello world' } });
  });

  it('rejects malformed JSON, non-object JSON, __proto__ keys (400) and other content types (415)', async () => {
    const cases: Array<[string, string, number]> = [
      ['{"a":', 'application/json', 400],
      ['[1,2]', 'application/json', 400],
      ['{"__proto__":{"x":1}}', 'application/json', 400],
      ['{"a":{"constructor":{"prototype":1}}}', 'application/json', 400],
      ['__proto__[x]=1', 'application/x-www-form-urlencoded', 400],
      ['<a/>', 'text/xml', 415],
    ];
    for (const [body, type, status] of cases) {
      const res = await request(`${base}/items/1`, { method: 'POST', body, headers: { 'content-type': type } });
      expect(res.statusCode, body).toBe(status);
      const parsed = (await res.body.json()) as { errors: Array<{ message: string }> };
      expect(parsed.errors[0]!.message.length).toBeGreaterThan(0);
    }
  });

  it('answers 413 for a declared body over the cap without reading it, and closes the connection', async () => {
    const text = await raw(server.port, `POST /items/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('connection: close');
  });

  it('answers 413 for a chunked body that grows over the cap', async () => {
    const chunk = 'x'.repeat(50);
    const text = await raw(
      server.port,
      `POST /items/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n${chunk}\r\n32\r\n${chunk}\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('writes the same head for a body sent again: a new request id each time, its headers as they are now', async () => {
    const text = await raw(server.port, 'GET /same HTTP/1.1\r\nHost: x\r\n\r\nGET /same HTTP/1.1\r\nHost: x\r\n\r\nGET /same?next HTTP/1.1\r\nHost: x\r\n\r\n');
    const replies = text.split('HTTP/1.1 ').slice(1);
    expect(replies).toHaveLength(3);
    const ids = replies.map((r) => /^x-request-id: ([0-9a-f]{8}-\d+)\r$/im.exec(r)?.[1]);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-\d+$/);
    expect(replies.map((r) => /^etag: (.*)\r$/im.exec(r)?.[1])).toEqual(['"t1"', '"t1"', '"t2"']);
    for (const r of replies) {
      expect(r).toMatch(/^content-type: application\/json; charset=utf-8\r$/im);
      expect(r).toMatch(/^content-length: 13\r$/im);
      expect(r).toContain('{"same":true}');
    }
  });

  it('answers a kept (frozen) reply with its own request id each time, a header set by the request only on that answer, and the length for HEAD', async () => {
    const get = 'GET /kept HTTP/1.1\r\nHost: x\r\n\r\n';
    const text = await raw(server.port, `${get}${get}GET /kept?extra HTTP/1.1\r\nHost: x\r\n\r\n${get}HEAD /kept HTTP/1.1\r\nHost: x\r\n\r\n${get}`);
    const replies = text.split('HTTP/1.1 ').slice(1);
    expect(replies).toHaveLength(6);
    const ids = replies.map((r) => /^x-request-id: ([0-9a-f]{8}-\d+)\r$/im.exec(r)?.[1]);
    expect(new Set(ids).size).toBe(6);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-\d+$/);
    expect(replies.map((r) => /^x-test: (.*)\r$/im.exec(r)?.[1] ?? null)).toEqual([null, null, 'once', null, null, null]);
    for (const [i, r] of replies.entries()) {
      expect(r).toMatch(/^200 OK\r$/m);
      expect(r).toMatch(/^etag: "kept"\r$/im);
      expect(r).toMatch(/^content-type: application\/json; charset=utf-8\r$/im);
      expect(r).toMatch(/^content-length: 13\r$/im);
      if (i === 4) expect(r).not.toContain('{"kept":true}');
      else expect(r).toContain('{"kept":true}');
    }
    // The kept reply itself is as it was made; what the transport derived from it is kept inside it.
    expect(kept.headers).toEqual([['ETag', '"kept"']]);
    expect(name === 'uws' ? uwsHeadOf(kept) : nodeHeadOf(kept)).toBeTruthy();
  });

  it('hands a GET its body when its handler reads it, at once or after an await', async () => {
    for (const path of ['/echo', '/echo-later']) {
      const text = await raw(server.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}`);
      expect(text, path).toMatch(/^HTTP\/1\.1 200 /);
      expect(text, path).toContain('{"has":true,"body":{"a":1}}');
      const chunked = await raw(server.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"a":2}\r\n0\r\n\r\n`);
      expect(chunked, path).toContain('{"has":true,"body":{"a":2}}');
      const none = await request(`${base}${path}`);
      expect(await none.body.json()).toEqual({ has: false, body: null });
    }
  });

  it('a GET answered without reading its body goes on with the next request on the connection', async () => {
    const text = await raw(server.port, 'GET /items/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /items/2 HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(text).toContain('{"id":"1"');
    expect(text).toContain('{"id":"2"');
  });

  it('answers 413 for a GET body over the cap that its handler reads', async () => {
    const text = await raw(server.port, `GET /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('answers 408 when the body does not arrive in time', async () => {
    const text = await raw(server.port, `POST /items/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":`, 800);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('hides unexpected errors (500, generic message) and passes AppError statuses', async () => {
    const res = await request(`${base}/fail`);
    expect(res.statusCode).toBe(500);
    const text = await res.body.text();
    expect(text).not.toContain('secret');
    const app = await request(`${base}/app-error`);
    expect(app.statusCode).toBe(418);
    expect(await app.body.json()).toMatchObject({ errors: [{ message: 'short and stout' }], data: null });
  });

  it('copies headers before the handler and adds response headers set by middleware', async () => {
    const res = await request(`${base}/headers`, { headers: { 'user-agent': 'vitest' } });
    expect(res.headers['x-test']).toBe('yes');
    expect(await res.body.json()).toEqual({ ua: 'vitest', ip: '127.0.0.1' });
  });

  it('answers /healthz and /readyz and emits request.handled', async () => {
    const health = await request(`${base}/healthz`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ status: 'ok' });
    let ready = false;
    server.addReadinessCheck('flag', () => ready);
    const notReady = await request(`${base}/readyz`);
    expect(notReady.statusCode).toBe(503);
    expect(await notReady.body.json()).toEqual({ status: 'not ready', checks: { flag: false } });
    ready = true;
    const ok = await request(`${base}/readyz`);
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
    expect(handled).toContain(503);
  });

  it('shows a readiness check\'s details without taking the node out', async () => {
    server.addReadinessCheck('degraded-things', () => ({ ready: true, details: { degraded: [{ stream: 'films', reason: 'bad edit' }] } }));
    const res = await request(`${base}/readyz`);
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as { status: string; checks: Record<string, boolean>; details: Record<string, unknown> };
    expect(body.status).toBe('ready');
    expect(body.checks['degraded-things']).toBe(true);
    expect(body.details).toEqual({ 'degraded-things': { degraded: [{ stream: 'films', reason: 'bad edit' }] } });
  });

  it('survives a client that goes away while the handler awaits', async () => {
    await raw(server.port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', 50);
    await new Promise((r) => setTimeout(r, 350));
    const res = await request(`${base}/healthz`);
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(server.inFlight).toBe(0);
  });

  it('refuses a port that is already taken instead of sharing it (SO_REUSEPORT trap)', async () => {
    const other = create(completeConfig({ http: { port: server.port } }, root), createLogger('silent'), new Hooks());
    await expect(other.listen()).rejects.toThrow(/already in use/);
  });

  it('sends an X-Request-Id on every answer, and logs a 500 under it', async () => {
    const a = await request(`${base}/items/1`);
    const b = await request(`${base}/nope`);
    await a.body.text();
    await b.body.text();
    const idA = String(a.headers['x-request-id']);
    const idB = String(b.headers['x-request-id']);
    expect(idA).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(idB).not.toBe(idA);
    // A client's own id is not trusted without http.trust_proxy.
    const c = await request(`${base}/items/1`, { headers: { 'x-request-id': 'mine' } });
    await c.body.text();
    expect(c.headers['x-request-id']).not.toBe('mine');
  });

  it('answers an unknown method 501 and a lower-case one 400, with the envelope', async () => {
    for (const [line, status] of [['FOO /items/1 HTTP/1.1', 501], ['PROPFIND /items/1 HTTP/1.1', 501], ['get /items/1 HTTP/1.1', 400]] as const) {
      const text = await raw(server.port, `${line}\r\nHost: x\r\n\r\n`);
      expect(text, line).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(text, line).toContain('{"errors":[{"message":');
    }
  });

  it('answers a request head that is too large, or has too many headers, with 431', async () => {
    const big = await raw(server.port, `GET /items/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    const many = Array.from({ length: 150 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const text = await raw(server.port, `GET /items/1 HTTP/1.1\r\nHost: x\r\n${many}\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    const after = await request(`${base}/healthz`);
    expect(after.statusCode).toBe(200);
    await after.body.text();
  });

  it('answers HTTP/1.0 (nginx talks 1.0 to upstreams): node:http serves it, uWebSockets.js answers 505', async () => {
    const text = await raw(server.port, 'GET /items/5 HTTP/1.0\r\nHost: x\r\n\r\n');
    if (name === 'node') {
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
      expect(text).toContain('{"id":"5"');
    } else {
      // uWebSockets.js refuses HTTP/1.0 before the product sees the request (docs/api.md, "Transports").
      expect(text).toMatch(/^HTTP\/1\.1 505 /);
    }
    const after = await request(`${base}/healthz`);
    expect(after.statusCode).toBe(200);
    await after.body.text();
  });

  it('lets a decorator shape the answers the transport decides itself (404, 413)', async () => {
    server.setTransportReplyDecorator((req, reply) => ({ ...reply, headers: [...(reply.headers ?? []), ['X-Decorated', req.path]] }));
    try {
      const res = await request(`${base}/nope`);
      await res.body.text();
      expect(res.headers['x-decorated']).toBe('/nope');
      const text = await raw(server.port, `POST /items/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":`);
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text.toLowerCase()).toContain('x-decorated: /items/1');
    } finally {
      server.setTransportReplyDecorator(null);
    }
  });
});

describe.each(TRANSPORTS.filter((t) => t.available))('graceful shutdown ($name)', ({ create }) => {
  it('stops accepting, finishes in-flight requests, then closes', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'http-'));
    const server = create(completeConfig({ http: { port: 0 } }, root), createLogger('silent'), new Hooks());
    server.route('GET', '/slow', () => new Promise((r) => setTimeout(() => r({ status: 200, body: '{"done":true}' }), 200)));
    await server.listen();
    const url = server.url;
    const pending = request(`${url}/slow`);
    await new Promise((r) => setTimeout(r, 50));
    const closing = server.close(2000);
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ done: true });
    await closing;
    await expect(request(`${url}/healthz`)).rejects.toThrow();
    rmSync(root, { recursive: true, force: true });
  });
});
