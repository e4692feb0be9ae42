import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Issue #34 item 3: the documented lost-update-safe edit (GET the entry and its ETag, PATCH
 * with If-Match; a stale If-Match gets 412) run by a page of another origin in headless
 * Chromium, with the default CORS settings and only the page's origin listed. With the old
 * default allowed headers the PATCH's preflight refused If-Match ("Failed to fetch").
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.log(`[cors-browser] skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or .ci/setup-chromium; CHROMIUM_PATH names another)`);

describe.skipIf(!available)('a cross-origin browser client', () => {
  let app: TestApp;
  let browser: Browser;
  let site: Server;
  let origin: string;
  beforeAll(async () => {
    // The page's own origin: another port on `localhost` (a different host name than the API's 127.0.0.1).
    site = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<!doctype html><title>another site</title>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
    origin = `http://localhost:${(site.address() as { port: number }).port}`;
    app = await startApp({
      streams: { books: { fields: { id: 'integer', title: 'string' } } },
      data: { books: [{ id: 1, title: 'Earthsea' }] },
      config: { api: { middleware: ['cors'], cors: { origins: [origin] } } },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await new Promise<void>((resolve) => site?.close(() => resolve()));
  });

  it('edits with If-Match from a page of another origin, and a stale version gets 412', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${origin}/`);
    const outcome = await page.evaluate(async (api: string) => {
      const url = `${api}/api/streams/books/entries/1`;
      const first = await fetch(url);
      const etag = first.headers.get('etag');
      const saved = await fetch(url, { method: 'PATCH', headers: { 'content-type': 'application/json', 'if-match': etag ?? '' }, body: JSON.stringify({ title: 'Earthsea (ed.)' }) });
      const stale = await fetch(url, { method: 'PATCH', headers: { 'content-type': 'application/json', 'if-match': etag ?? '' }, body: JSON.stringify({ title: 'lost update' }) });
      const now = (await (await fetch(url)).json()) as { data: { title: string } };
      return { etag, saved: saved.status, stale: stale.status, title: now.data.title };
    }, app.url);
    expect(outcome.etag).toMatch(/^(W\/)?"/);
    expect(outcome.saved).toBe(200);
    expect(outcome.stale).toBe(412);
    expect(outcome.title).toBe('Earthsea (ed.)');
    // The 412 is an answer the page reads, not a CORS failure in the console.
    expect(errors.filter((e) => /CORS|Failed to fetch/i.test(e))).toEqual([]);
    await page.close();
  }, 60_000);
});
