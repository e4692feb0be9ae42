import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #13 item 7: a throttle that holds. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('throttle', () => {
  it('counts 401s given before it: guessing tokens ends in 429s, not endless 401s', async () => {
    app = await startApp({ streams: { notes: {} }, config: { api: { middleware: ['auth.bearer', 'throttle:3,1'], auth: { tokens: ['right-token-123'] } } } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await app.request('GET', '/api/streams/notes/entries', undefined, { authorization: `Bearer guess-${i}-xxxx` })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it('keeps one window per client: another client does not reset it', async () => {
    app = await startApp({ streams: { notes: {} }, config: { http: { trust_proxy: true }, api: { middleware: ['throttle:2,1'] } } });
    const as = (ip: string) => app!.request('GET', '/api/streams/notes/entries', undefined, { 'x-forwarded-for': ip });
    expect((await as('203.0.113.1')).status).toBe(200);
    expect((await as('203.0.113.1')).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await as(`198.51.100.${i}`)).status).toBe(200);
    expect((await as('203.0.113.1')).status).toBe(429);
  });

  it('reads X-Forwarded-Host like X-Forwarded-For: the hop the trusted proxy appended', async () => {
    app = await startApp({ streams: { notes: {} }, config: { http: { trust_proxy: true } } });
    const res = await app.request('GET', '/api/streams', undefined, { 'x-forwarded-host': 'evil.example, api.example.com', 'x-forwarded-proto': 'http, https' });
    expect(res.json.links.self).toBe('https://api.example.com/api/streams');
    const untrusted = await startApp({ streams: { notes: {} } });
    try {
      const plain = await untrusted.request('GET', '/api/streams', undefined, { 'x-forwarded-host': 'evil.example' });
      expect(plain.json.links.self).toBe(`${untrusted.url}/api/streams`);
    } finally {
      await untrusted.close();
    }
  });
});
