import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Issue #26 item 9: `/openapi.json` was built and serialized again for every new `Host`
 * (150–200 ms of CPU with 300 streams; 200 Hosts took over 20 s). Builds are counted by
 * wrapping the real `buildDocument`.
 */
const builds = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../plugins/openapi/document.js', async (original) => {
  const real = await original<typeof import('../../plugins/openapi/document.js')>();
  return {
    ...real,
    buildDocument: (...args: Parameters<typeof real.buildDocument>) => {
      builds.count++;
      return real.buildDocument(...args);
    },
  };
});

const STREAM_COUNT = 40;
const streams = Object.fromEntries(
  Array.from({ length: STREAM_COUNT }, (_, i) => [`s${i}`, { fields: { id: 'integer', title: { type: 'string', required: true }, year: 'integer' } }]),
);

type Doc = { servers: Array<{ url: string }>; paths: Record<string, unknown> };

describe('the OpenAPI document is built once, whatever the Host', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams,
      config: { api: { interfaces: [{ name: 'api', prefix: 'api' }, { name: 'public', prefix: 'public', middleware: ['readonly'], resources: ['entries'] }] } },
    });
  });
  afterAll(() => app.close());

  it('200 distinct Host headers cost one build; each answer names its own Host, with its own ETag', async () => {
    builds.count = 0;
    const etags = new Set<string>();
    let first: Doc | undefined;
    for (let i = 0; i < 200; i++) {
      const host = `host-${i}.example:8080`;
      const res = await app.request('GET', '/api/openapi.json', undefined, { host });
      expect(res.status).toBe(200);
      const doc = res.json as Doc;
      // Never another client's base URL: the splice follows the Host of this request.
      expect(doc.servers).toEqual([{ url: `http://${host}` }]);
      etags.add(res.headers.etag as string);
      first ??= doc;
      if (i === 199) expect({ ...doc, servers: first.servers }).toEqual(first);
    }
    expect(builds.count).toBe(1);
    expect(etags.size).toBe(200);
    // The ETag is per Host: another Host's tag does not earn a 304.
    const other = await app.request('GET', '/api/openapi.json', undefined, { host: 'host-0.example:8080', 'if-none-match': [...etags][1]! });
    expect(other.status).toBe(200);
    const same = await app.request('GET', '/api/openapi.json', undefined, { host: 'host-0.example:8080', 'if-none-match': [...etags][0]! });
    expect(same.status).toBe(304);
  });

  it('garbage Hosts fall back to the bound address and build nothing more', async () => {
    await app.request('GET', '/api/openapi.json');
    builds.count = 0;
    for (let i = 0; i < 50; i++) {
      const res = await app.request('GET', '/api/openapi.json', undefined, { host: `bad host ${'x'.repeat(i * 40)}` });
      expect(res.status).toBe(200);
      expect((res.json as Doc).servers[0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    }
    expect(builds.count).toBe(0);
  });

  it('keeps one document per interface, never serving one interface\'s to another', async () => {
    builds.count = 0;
    for (let i = 0; i < 3; i++) {
      const api = (await app.request('GET', '/api/openapi.json', undefined, { host: `a${i}.example` })).json as Doc;
      const pub = (await app.request('GET', '/public/openapi.json', undefined, { host: `a${i}.example` })).json as Doc;
      expect(Object.keys(api.paths)).toContain('/api/streams/s0/entries');
      expect(Object.keys(pub.paths)).toContain('/public/streams/s0/entries');
      expect(Object.keys(pub.paths).some((p) => p.startsWith('/api/'))).toBe(false);
    }
    expect(builds.count).toBeLessThanOrEqual(1);
  });

  it('a definition change rebuilds it, once', async () => {
    const created = await app.request('POST', '/api/streams', { id: 'films', fields: { id: 'integer', title: 'string' } });
    expect(created.status).toBe(201);
    builds.count = 0;
    for (let i = 0; i < 5; i++) {
      const doc = (await app.request('GET', '/api/openapi.json', undefined, { host: `f${i}.example` })).json as Doc;
      expect(Object.keys(doc.paths)).toContain('/api/streams/films/entries/{key}');
    }
    expect(builds.count).toBe(1);
    const deleted = await app.request('DELETE', '/api/streams/films');
    expect(deleted.status).toBe(204);
    const doc = (await app.request('GET', '/api/openapi.json')).json as Doc;
    expect(Object.keys(doc.paths)).not.toContain('/api/streams/films/entries/{key}');
  });
});

describe('with http.base_url set', () => {
  it('Host never matters: one build, one body, the configured URL', async () => {
    const app = await startApp({ streams, config: { http: { base_url: 'https://api.example.com/' } } });
    try {
      builds.count = 0;
      for (let i = 0; i < 50; i++) {
        const res = await app.request('GET', '/api/openapi.json', undefined, { host: `evil-${i}.example` });
        expect((res.json as Doc).servers).toEqual([{ url: 'https://api.example.com' }]);
      }
      expect(builds.count).toBe(1);
    } finally {
      await app.close();
    }
  });
});

describe('DocumentCache', () => {
  const definitions = [] as never[];
  const build = (url: string) => ({ openapi: '3.1.0', servers: [{ url }], paths: { '/x': { note: 'y'.repeat(10_000) } } });

  it('holds a template and one body per interface, whatever the number of bases', async () => {
    const { DocumentCache } = await import('../../plugins/openapi/document-cache.js');
    const cache = new DocumentCache(1024 * 1024);
    cache.get('api', 'http://a', definitions, build);
    const held = cache.bytes;
    for (let i = 0; i < 500; i++) {
      const { body } = cache.get('api', `http://h${i}`, definitions, build);
      expect(JSON.parse(body.toString()).servers[0].url).toBe(`http://h${i}`);
    }
    expect(cache.bytes).toBe(held);
    expect(held).toBeLessThan(25_000);
  });

  it('keeps nothing larger than its budget (built per request instead)', async () => {
    const { DocumentCache } = await import('../../plugins/openapi/document-cache.js');
    const cache = new DocumentCache(4096);
    let calls = 0;
    for (let i = 0; i < 3; i++) cache.get('api', 'http://a', definitions, (url) => (calls++, build(url)));
    expect(cache.bytes).toBe(0);
    expect(calls).toBe(3);
  });
});
