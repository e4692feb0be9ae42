import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('throttle behind a trusted proxy', () => {
  it('counts the address the proxy appended, not what the client put in front of it', async () => {
    app = await startApp({ streams: { notes: {} }, config: { http: { trust_proxy: true }, api: { middleware: ['throttle:2,1'] } } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      // A client rotating a forged first hop; the proxy always appends the same real address.
      const res = await app.request('GET', '/api/streams/notes/entries', undefined, { 'x-forwarded-for': `10.0.0.${i}, 203.0.113.7` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
  });
});

describe('cors settings', () => {
  it('refuses a wildcard origin with credentials at boot', async () => {
    const error = await startApp({ config: { api: { middleware: ['cors'], cors: { origins: ['*'], credentials: true } } } }).then(
      (started) => {
        app = started;
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/origins \["\*"\] cannot be combined with credentials/);
  });
});
