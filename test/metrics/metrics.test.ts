/**
 * `GET /metrics` (issue #32): the Prometheus text format from the optional metrics plugin,
 * its series' names, types and labels, route templates instead of URLs, and where it is served.
 */
import net from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

const books = { id: 'books', fields: { id: { type: 'integer' }, title: { type: 'string' } } };
const data = { books: [{ id: 1, title: 'One' }, { id: 2, title: 'Two' }, { id: 3, title: 'Three' }] };

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function start(config: Record<string, unknown> = {}): Promise<TestApp> {
  const app = await startApp({ streams: { books }, data, config: { plugins: ['metrics'], ...config } });
  apps.push(app);
  return app;
}

/** `# TYPE name type` lines, and the sample lines (name{labels} value). */
function parse(text: string): { types: Map<string, string>; samples: Array<{ name: string; labels: Record<string, string>; value: number }> } {
  const types = new Map<string, string>();
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (sample) {
      const labels: Record<string, string> = {};
      for (const match of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[match[1]!] = match[2]!;
      samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
    }
  }
  return { types, samples };
}

async function scrape(url: string): Promise<{ status: number; type: string; text: string }> {
  const res = await request(url);
  return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
}

describe('GET /metrics', () => {
  it('is off by default', async () => {
    const app = await startApp({ streams: { books }, data });
    apps.push(app);
    expect((await app.request('GET', '/metrics')).status).toBe(404);
  });

  it('carries the named series with their types, in the Prometheus text format', async () => {
    const app = await start();
    await app.request('GET', '/api/streams/books/entries/1');
    const { status, type, text } = await scrape(`${app.url}/metrics`);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const { types } = parse(text);
    expect(Object.fromEntries([...types].filter(([name]) => !name.startsWith('nodejs_') && !name.startsWith('process_')))).toEqual({
      http_requests_total: 'counter',
      http_request_duration_seconds: 'histogram',
      streams_boot_duration_seconds: 'gauge',
      streams_entries: 'gauge',
      streams_cache_hits_total: 'counter',
      streams_cache_misses_total: 'counter',
      streams_storage_faults_total: 'counter',
      streams_realtime_subscribers: 'gauge',
      streams_realtime_history_bytes: 'gauge',
      streams_webhook_outbox_pending: 'gauge',
      streams_webhook_failing_endpoints: 'gauge',
      streams_webhook_consecutive_failures: 'gauge',
    });
    // Node's own: event-loop lag, heap, GC.
    expect(types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
    expect(types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    expect(types.get('nodejs_gc_duration_seconds')).toBe('histogram');
  });

  it('labels requests by route template, never by a raw URL; entries per stream; cache hits per cache', async () => {
    const app = await start();
    for (const id of [1, 2, 3, 2]) expect((await app.request('GET', `/api/streams/books/entries/${id}?x=${id}`)).status).toBe(200);
    expect((await app.request('GET', '/api/streams/books/entries/99')).status).toBe(404);
    expect((await app.request('GET', '/no/such/path/12345')).status).toBe(404);
    expect((await app.request('GET', '/readyz')).status).toBe(200);
    const { samples } = parse((await scrape(`${app.url}/metrics`)).text);
    const requests = samples.filter((s) => s.name === 'http_requests_total');
    const routes = new Set(samples.filter((s) => s.labels.route !== undefined).map((s) => s.labels.route));
    expect(requests).toContainEqual({ name: 'http_requests_total', labels: { method: 'GET', route: '/api/streams/:stream/entries/:entry', status: '200' }, value: 4 });
    expect(requests).toContainEqual({ name: 'http_requests_total', labels: { method: 'GET', route: '/api/streams/:stream/entries/:entry', status: '404' }, value: 1 });
    expect(requests).toContainEqual({ name: 'http_requests_total', labels: { method: 'GET', route: '(unmatched)', status: '404' }, value: 1 });
    expect(requests).toContainEqual({ name: 'http_requests_total', labels: { method: 'GET', route: '/readyz', status: '200' }, value: 1 });
    for (const route of routes) expect(route, 'no raw URL in a label').not.toMatch(/books|\d|\?/);
    const duration = samples.find((s) => s.name === 'http_request_duration_seconds_count' && s.labels.route === '/api/streams/:stream/entries/:entry');
    expect(duration?.value).toBe(5);
    expect(samples).toContainEqual({ name: 'streams_entries', labels: { stream: 'books' }, value: 3 });
    // The second GET of entry 2 is answered from the reply cache.
    const jsonHits = samples.find((s) => s.name === 'streams_cache_hits_total' && s.labels.cache === 'api_replies');
    expect(jsonHits?.value).toBeGreaterThan(0);
    expect(samples.find((s) => s.name === 'streams_boot_duration_seconds')?.value).toBeGreaterThan(0);
  });

  it('on its own listener, the main port does not serve it', async () => {
    const port = await freePort();
    const app = await start({ metrics: { expose: 'listener', port } });
    expect((await app.request('GET', '/metrics')).status).toBe(404);
    const own = await scrape(`http://127.0.0.1:${port}/metrics`);
    expect(own.status).toBe(200);
    expect(own.text).toContain('# TYPE http_requests_total counter');
    expect((await scrape(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  });

  it('as an API endpoint behind the interface middleware (auth.bearer)', async () => {
    const app = await start({ metrics: { expose: 'api' }, api: { middleware: ['auth.bearer'], auth: { tokens: ['metrics-scraper-token'] } } });
    expect((await app.request('GET', '/metrics')).status).toBe(404);
    expect((await app.request('GET', '/api/metrics')).status).toBe(401);
    const res = await request(`${app.url}/api/metrics`, { headers: { authorization: 'Bearer metrics-scraper-token' } });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('# TYPE streams_entries gauge');
  });

  it('a wrong setting stops the boot naming it', async () => {
    await expect(startApp({ config: { plugins: ['metrics'], metrics: { expose: 'everywhere' } } })).rejects.toThrow(/\/metrics\/expose/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
