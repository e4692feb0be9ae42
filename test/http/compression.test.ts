import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Compressor, chosen } from '../../plugins/http/compression.js';
import type { HttpRequest } from '../../plugins/http/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { TRANSPORTS } from './transports.js';

/**
 * Issue #34 item 4: answers are compressed (br, gzip) for clients that accept it, on both
 * transports: large text bodies only (GET one of a small entry stays as it is), never an
 * event stream, with `Vary: Accept-Encoding`; the same body object is compressed once.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const books = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, title: `A title long enough to compress well, number ${i + 1}` }));

for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`compression over ${transport.name}${transport.available ? '' : ` (skipped: ${transport.skipReason})`}`, () => {
    it('serves a list page as br or gzip when asked, identical once decoded, and small answers as they are', async () => {
      app = await startApp({ streams: { books: { fields: { id: 'integer', title: 'string' } } }, data: { books }, config: { http: { transport: transport.name } } });
      const url = `${app.url}/api/streams/books/entries?per_page=60`;
      const plain = await request(url);
      const text = await plain.body.text();
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
      for (const [encoding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
        const answer = await request(url, { headers: { 'accept-encoding': `${encoding}, identity;q=0.5` } });
        const bytes = Buffer.from(await answer.body.arrayBuffer());
        expect(answer.headers['content-encoding']).toBe(encoding);
        expect(answer.headers.vary).toMatch(/Accept-Encoding/i);
        expect(bytes.length).toBeLessThan(Buffer.byteLength(text) / 3);
        expect(decode(bytes).toString('utf8')).toBe(text);
        expect(answer.headers.etag).toBe(plain.headers.etag);
      }
      // q=0 refuses an encoding.
      const refused = await request(url, { headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } });
      await refused.body.dump();
      expect(refused.headers['content-encoding']).toBeUndefined();
      // GET one of a small entry: under the threshold, sent as it is.
      const one = await request(`${app.url}/api/streams/books/entries/1`, { headers: { 'accept-encoding': 'br, gzip' } });
      await one.body.dump();
      expect(one.headers['content-encoding']).toBeUndefined();
      // An event stream is never compressed (it is read as it comes).
      const sse = await request(`${app.url}/api/streams/books/changes`, { headers: { accept: 'text/event-stream', 'accept-encoding': 'br, gzip' } });
      expect(sse.headers['content-encoding']).toBeUndefined();
      sse.body.destroy();
    });
  });
}

describe('Compressor', () => {
  const requestFor = (acceptEncoding: string): HttpRequest => ({ method: 'GET', header: (name: string) => (name === 'accept-encoding' ? acceptEncoding : undefined) }) as unknown as HttpRequest;
  const compressor = new Compressor({ enabled: true, threshold: 1024, brotli_quality: 4, gzip_level: 6 });

  it('compresses the same body object once (a reply-cache hit), and picks br over gzip', async () => {
    const body = Buffer.from(JSON.stringify(books));
    const first = await compressor.compress(requestFor('gzip, br'), { status: 200, body });
    const second = await compressor.compress(requestFor('gzip, br'), { status: 200, body });
    expect(first.headers).toContainEqual(['Content-Encoding', 'br']);
    expect(second.body).toBe(first.body);
    expect(chosen('gzip')).toBe('gzip');
    expect(chosen('*')).toBe('gzip');
    expect(chosen('identity')).toBeUndefined();
    expect(chosen('br;q=0,gzip')).toBe('gzip');
  });

  it('answers a frozen reply (a reply-cache hit) with the same frozen answer per encoding; a reply that is not frozen gets a new one', async () => {
    const compressor = new Compressor({ enabled: true, threshold: 1024, brotli_quality: 4, gzip_level: 6 });
    const body = Buffer.from(JSON.stringify(books));
    const kept = Object.freeze({ status: 200, headers: Object.freeze([Object.freeze(['ETag', '"v1"'])]) as Array<[string, string]>, body });
    const plain = await compressor.compress(requestFor(''), kept);
    expect(plain.headers).toEqual([['ETag', '"v1"'], ['Vary', 'Accept-Encoding']]);
    expect(Object.isFrozen(plain) && Object.isFrozen(plain.headers)).toBe(true);
    expect(await compressor.compress(requestFor(''), kept)).toBe(plain);
    const br = await compressor.compress(requestFor('br'), kept);
    expect(br.headers).toEqual([['ETag', '"v1"'], ['Vary', 'Accept-Encoding'], ['Content-Encoding', 'br']]);
    expect(brotliDecompressSync(br.body as Buffer).equals(body)).toBe(true);
    expect(await compressor.compress(requestFor('br'), kept)).toBe(br);
    const gzip = await compressor.compress(requestFor('gzip'), kept);
    expect(gzip.headers).toContainEqual(['Content-Encoding', 'gzip']);
    expect(await compressor.compress(requestFor('br, gzip'), kept)).toBe(br);
    expect(await compressor.compress(requestFor(''), kept)).toBe(plain);
    // HEAD has no body to encode: the plain answer.
    expect(await compressor.compress({ ...requestFor('br'), method: 'HEAD' } as HttpRequest, kept)).toBe(plain);
    // Mutable replies (headers that could change) are answered afresh each time.
    const open = { status: 200, headers: [['ETag', '"v2"']] as Array<[string, string]>, body };
    const once = await compressor.compress(requestFor(''), open);
    open.headers[0]![1] = '"v3"';
    const again = await compressor.compress(requestFor(''), open);
    expect(again).not.toBe(once);
    expect(again.headers).toContainEqual(['ETag', '"v3"']);
    const thawed = Object.freeze({ status: 200, headers: [['ETag', '"v4"']] as Array<[string, string]>, body });
    expect(await compressor.compress(requestFor(''), thawed)).not.toBe(await compressor.compress(requestFor(''), thawed));
  });

  it('compresses a large body off the event loop', async () => {
    const body = Buffer.from('x'.repeat(1024 * 1024));
    const result = compressor.compress(requestFor('gzip'), { status: 200, body });
    expect(result).toBeInstanceOf(Promise);
    expect(gunzipSync((await result).body as Buffer).length).toBe(body.length);
  });
});
