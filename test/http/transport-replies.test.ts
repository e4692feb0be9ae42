import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { rawHttp } from '../helpers/raw-http.js';
import { TRANSPORTS } from './transports.js';

const raw = rawHttp;

function bodyOf(response: string): { links: Record<string, string>; errors: Array<{ message: string }> } {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as never;
}

// A transport without a native binary here is skipped with the loader's reason in its title.
for (const { name, available, skipReason } of TRANSPORTS) describe.skipIf(!available)(`answers the ${name} transport writes itself are real API answers${available ? '' : ` (skipped: ${skipReason})`}`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams: { notes: {} },
      config: { http: { transport: name, max_body: 64, body_timeout_ms: 300 }, api: { middleware: ['cors'], cors: { origins: ['https://app.example'] } } },
    });
  });
  afterAll(() => app.close());

  const head = (extra: string) => `POST /api/streams/notes/entries HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nContent-Type: application/json\r\n${extra}\r\n`;

  it('a 413 decided from Content-Length carries the CORS headers and the envelope links', async () => {
    const text = await raw(app.url, `${head('Content-Length: 100000\r\n')}{"a":`, 400);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/access-control-allow-origin: https:\/\/app\.example/i);
    const body = bodyOf(text);
    expect(body.errors[0]!.message).toMatch(/larger than the limit of 64 bytes/);
    expect(body.links.self).toMatch(/\/api\/streams\/notes\/entries$/);
    expect(body.links.streams).toMatch(/\/api\/streams$/);
  });

  it('a 408 for a body that does not arrive carries them too', async () => {
    const text = await raw(app.url, `${head('Content-Length: 20\r\n')}{"a":`, 900);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toMatch(/access-control-allow-origin: https:\/\/app\.example/i);
    expect(bodyOf(text).links.self).toMatch(/\/api\/streams\/notes\/entries$/);
  });

  it('the boot line transport is the one asked for', () => {
    const server = app.kernel.get(HTTP_SERVER);
    expect(server.transport).toMatch(name === 'uws' ? /^uWebSockets\.js / : /^node:http$/);
  });
});
