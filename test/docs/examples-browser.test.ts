import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * Issue #34 item 1, the JavaScript side: the browser examples of docs/realtime.md (an
 * EventSource with a filter, a WebSocket subscription) run as written in headless Chromium,
 * on a page of the embedded app's own origin (only the documented host is replaced by the
 * live server's), and print the changes the docs say they print.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.log(`[docs-examples-browser] skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or .ci/setup-chromium; CHROMIUM_PATH names another)`);

/** The `js` code blocks of a doc that follow `marker`. */
function jsBlockAfter(file: string, marker: string): string {
  const doc = readFileSync(path.join(REPO, file), 'utf8');
  const at = doc.indexOf(marker);
  expect(at, `${file} lost "${marker}"`).toBeGreaterThan(-1);
  return /```js\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
}

describe.skipIf(!available)('the browser examples of docs/realtime.md', () => {
  let server: ServerProcess;
  let folder: string;
  let browser: Browser;
  beforeAll(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'docs-browser-'));
    server = await startServer(['--config', 'config/default.json', '--data', path.join(folder, 'app'), '--port', '0', '--log-level', 'warn']);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    await server?.exit;
    rmSync(folder, { recursive: true, force: true });
  });

  it('the EventSource and WebSocket examples print the changes of the books they follow', async () => {
    const page = await browser.newPage();
    const printed: unknown[][] = [];
    page.on('console', (m) => {
      if (m.type() === 'log') void Promise.all(m.args().map((a) => a.jsonValue())).then((args) => printed.push(args));
    });
    // A page of the app's own origin: the examples use relative URLs (or the documented host).
    await page.goto(`${server.url}/healthz`);
    const host = new URL(server.url).host;
    // Each example as written, plus one line that lets the test see when its connection is open.
    await page.evaluate(`${jsBlockAfter('docs/realtime.md', '## Server-Sent Events')}\nwindow.exampleSource = source;`);
    await page.evaluate(`${jsBlockAfter('docs/realtime.md', '## WebSocket').replaceAll('127.0.0.1:8080', host)}\nwindow.exampleSocket = ws;`);
    await expect.poll(() => page.evaluate('window.exampleSource.readyState')).toBe(1);
    await expect.poll(() => printed.some((args) => (args[0] as { type?: string })?.type === 'subscribed')).toBe(true);
    const post = async (body: object): Promise<number> => {
      const answer = await request(`${server.url}/api/streams/books/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await answer.body.dump();
      return answer.statusCode;
    };
    expect(await post({ title: 'The Dispossessed', author: 1, year: 1974 })).toBe(201);
    expect(await post({ title: 'Nightfall', author: 2, year: 1941 })).toBe(201);
    // EventSource (after 1970): `created {…} cursor …` for The Dispossessed only.
    const fromSource = () => printed.filter((args) => args[0] === 'created');
    await expect.poll(() => fromSource().length, { timeout: 5000 }).toBe(1);
    expect(fromSource()[0]).toEqual(['created', expect.objectContaining({ stream: 'books', data: expect.objectContaining({ title: 'The Dispossessed' }) }), 'cursor', expect.stringMatching(/-\d+$/)]);
    // WebSocket (author 1): the created message of The Dispossessed only.
    const fromSocket = () => printed.filter((args) => (args[0] as { type?: string })?.type === 'created');
    await expect.poll(() => fromSocket().length, { timeout: 5000 }).toBe(1);
    expect(fromSocket()[0]![0]).toMatchObject({ type: 'created', stream: 'books', data: { title: 'The Dispossessed', author: 1 } });
    await page.close();
  }, 60_000);
});
