import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Issue #18: `/api/docs` in a real browser (Debian's chromium, driven by playwright-core):
 * every stream's operations are on the page, and no request leaves the machine.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.log(`[docs-browser] skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or .ci/setup-chromium; CHROMIUM_PATH names another)`);

describe.skipIf(!available)('/api/docs in Chromium', () => {
  let app: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    app = await startApp({
      streams: { books: { fields: { id: 'integer', title: 'string' } }, authors: { fields: { id: 'integer', name: 'string' } } },
      data: { books: [{ id: 1, title: 'Earthsea' }] },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // playwright gives every launch a fresh, empty profile of its own.
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it("shows each stream's operations, with every request served by us", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    await page.goto(`${app.url}/api/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    const text = await page.locator('#swagger-ui').innerText();
    for (const path of ['/api/streams/books/entries', '/api/streams/books/entries/{key}', '/api/streams/authors/entries']) expect(text).toContain(path);
    expect(await page.locator('.opblock-get').count()).toBeGreaterThan(4);
    const foreign = requested.filter((url) => !url.startsWith(app.url) && !url.startsWith('data:'));
    expect(foreign).toEqual([]);
    // No error or warning box of Swagger UI (it warned about jsonSchemaDialect), no console error.
    expect(await page.locator('.errors-wrapper, .error-wrapper').allInnerTexts()).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
