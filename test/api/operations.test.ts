import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Kernel } from '../../kernel/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

const streams = { planets: { name: 'Planets', fields: { id: 'integer', name: 'string' } } };

describe('operations', () => {
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('answers /healthz and /readyz outside the API, even with the API disabled', async () => {
    app = await startApp({ streams, config: { api: { enabled: false } } });
    const health = await app.request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
    const ready = await app.request('GET', '/readyz');
    expect([200, 503]).toContain(ready.status);
    expect(ready.json.checks).toHaveProperty('entries');
    expect((await app.request('HEAD', '/healthz')).status).toBe(200);
    expect((await app.request('POST', '/healthz')).status).toBe(405);
  });

  it('builds links from http.base_url when set', async () => {
    app = await startApp({ streams, config: { http: { base_url: 'https://api.example.com/' } } });
    const res = await app.request('GET', '/api/streams/planets');
    expect(res.json.links.self).toBe('https://api.example.com/api/streams/planets');
    expect(res.json.links.streams).toBe('https://api.example.com/api/streams');
  });

  it('builds links from the Host header, ignores X-Forwarded-* unless trust_proxy, and never echoes a malformed Host', async () => {
    app = await startApp({ streams });
    const host = await app.request('GET', '/api/streams/planets', undefined, { host: 'streams.test:9000', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
    expect(host.json.links.self).toBe('http://streams.test:9000/api/streams/planets');
    await app.close();
    app = await startApp({ streams, config: { http: { trust_proxy: true } } });
    const proxied = await app.request('GET', '/api/streams/planets', undefined, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.example' });
    expect(proxied.json.links.self).toBe('https://public.example/api/streams/planets');
    const forged = await app.request('GET', '/api/streams/planets', undefined, { 'x-forwarded-host': 'a"b<script>' });
    expect(forged.json.links.self).toBe(`${app.url}/api/streams/planets`);
  });

  it('serves the API under a custom prefix', async () => {
    app = await startApp({ streams, config: { api: { prefix: '/v1/' } } });
    const res = await app.request('GET', '/v1/streams/planets');
    expect(res.status).toBe(200);
    expect(res.json.links.entries).toBe(`${app.url}/v1/streams/planets/entries`);
    expect((await app.request('GET', '/api/streams/planets')).status).toBe(404);
  });

  it('logs exactly one info line carrying the url, and no per-request info lines', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'streams-log-'));
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const kernel = new Kernel(buildConfig({ http: { port: 0 } }, root), { logger });
    try {
      await kernel.boot();
      const server = kernel.get(HTTP_SERVER);
      const withUrl = lines.filter((l) => typeof l.url === 'string');
      expect(withUrl).toHaveLength(1);
      expect(withUrl[0]!.url).toBe(`http://127.0.0.1:${server.port}`);
      expect(server.url).toBe(withUrl[0]!.url);
      const before = lines.length;
      for (let i = 0; i < 3; i++) await (await request(`${server.url}/api/streams`)).body.text();
      expect(lines.length).toBe(before);
    } finally {
      await kernel.shutdown();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lets addons add routes on the transport and observe request.handled', async () => {
    const handled: Array<{ path: string; status: number }> = [];
    const addon = definePlugin({
      name: 'hello',
      requires: ['http'],
      register({ use, hooks }) {
        use(HTTP_SERVER).route('GET', '/hello/:name', (req) => ({ status: 200, body: JSON.stringify({ hello: req.params.name }) }));
        hooks.on('request.handled', (p) => {
          handled.push({ path: p.path, status: p.status });
        });
      },
    });
    app = await startApp({ streams, plugins: [addon] });
    const res = await app.request('GET', '/hello/world');
    expect(res.json).toEqual({ hello: 'world' });
    await new Promise((r) => setTimeout(r, 10));
    expect(handled).toContainEqual({ path: '/hello/world', status: 200 });
  });

  it('drains in-flight requests on shutdown and stops listening', async () => {
    let release!: () => void;
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const addon = definePlugin({
      name: 'slow',
      requires: ['http'],
      register({ use }) {
        use(HTTP_SERVER).route('GET', '/slow', () => {
          entered();
          return new Promise((r) => (release = () => r({ status: 200, body: '{"slow":true}' })));
        });
      },
    });
    app = await startApp({ streams, plugins: [addon] });
    const url = app.url;
    const pending = request(`${url}/slow`);
    await inHandler;
    const closing = app.close();
    app = undefined;
    await new Promise((r) => setTimeout(r, 50));
    release();
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ slow: true });
    await closing;
    await expect(request(`${url}/healthz`)).rejects.toThrow();
  });
});
