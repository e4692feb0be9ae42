/**
 * The change history is read after the node listens (issue #33: no per-change work before
 * listening), and every use of the feed waits for that read. Real kernels on 127.0.0.1 over
 * real files in temp folders; the read's states with a read the test holds.
 */
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, buildConfig, definePlugin, Kernel } from '../../kernel/index.js';
import { ENTRIES } from '../../plugins/entries/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { REALTIME } from '../../plugins/realtime/index.js';
import { HistoryLoad } from '../../plugins/realtime/history-load.js';
import { memoryLogger } from '../helpers/logger.js';
import { cleanups, runCleanups } from './clients.js';
import { boot } from './films-app.js';

afterEach(runCleanups);

/** A films app that wrote `count` changes, shut down: its folder holds a history to read. */
async function withHistory(count: number): Promise<string> {
  const app = await boot('node');
  for (let id = 2; id < 2 + count; id++) expect((await app.request('POST', '/api/streams/films/entries', { id, title: `t${id}` })).status).toBe(201);
  await app.kernel.shutdown();
  return app.root;
}

async function restart(root: string, options: { logger?: ReturnType<typeof memoryLogger>['logger']; plugins?: ReturnType<typeof definePlugin>[] } = {}): Promise<Kernel> {
  const kernel = new Kernel(buildConfig({ http: { host: '127.0.0.1', port: 0, transport: 'node' }, log: { level: 'silent' } }, root), { plugins: options.plugins ?? [], logger: options.logger });
  cleanups.push(() => kernel.shutdown());
  await kernel.boot();
  return kernel;
}

async function getJson(url: string): Promise<{ status: number; json: { data?: Array<{ seq?: number; cursor: string; id: number }>; details?: Record<string, unknown>; errors?: Array<{ message: string }> } }> {
  const res = await request(url);
  return { status: res.statusCode, json: (await res.body.json()) as never };
}

describe('the change history is read after listening', () => {
  it('listens first, reads after the entries are loaded; the cursors go on from the history', async () => {
    const root = await withHistory(30);
    const { logger, lines } = memoryLogger('debug');
    const kernel = await restart(root, { logger });
    expect(await kernel.get(REALTIME).history.start()).toBe(true);
    const listening = lines.findIndex((l) => l.msg === 'listening');
    const read = lines.findIndex((l) => l.msg === 'change history read');
    const entries = lines.findIndex((l) => String(l.msg).startsWith('ready: entries'));
    expect(listening).toBeGreaterThanOrEqual(0);
    expect(entries).toBeGreaterThan(listening);
    expect(read).toBeGreaterThan(entries);
    const url = kernel.get(HTTP_SERVER).url;
    const ready = await getJson(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.json.details?.realtime).toBeUndefined();
    const page = await getJson(`${url}/api/streams/films/changes?per_page=100`);
    expect(page.json.data?.map((c) => c.id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
  });

  it('a write made before the history is read (a plugin writing in its boot) waits for it and is published after it', async () => {
    const root = await withHistory(5);
    const seeder = definePlugin(() => ({
      name: 'seeder',
      requires: ['entries'],
      async boot({ use }) {
        // Awaited in the boot: before the read started on its own, this write starts it.
        await use(ENTRIES).create('films', { id: 100, title: 'seeded' });
      },
    }));
    const kernel = await restart(root, { plugins: [seeder] });
    const page = await getJson(`${kernel.get(HTTP_SERVER).url}/api/streams/films/changes?per_page=100`);
    expect(page.json.data?.map((c) => c.id)).toEqual([2, 3, 4, 5, 6, 100]);
    const seqs = page.json.data!.map((c) => Number(c.cursor.slice(c.cursor.lastIndexOf('-') + 1)));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('a history that cannot be read leaves entries served, changes answering 503 and /readyz naming the error', async () => {
    const root = await withHistory(1);
    const folder = path.join(root, 'streams', 'data', '.realtime');
    rmSync(folder, { recursive: true, force: true });
    writeFileSync(folder, 'not a folder');
    const { logger, lines } = memoryLogger('error');
    const kernel = await restart(root, { logger });
    expect(await kernel.get(REALTIME).history.start()).toBe(false);
    const url = kernel.get(HTTP_SERVER).url;
    const write = await request(`${url}/api/streams/films/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 50, title: 'still written' }) });
    expect(write.statusCode).toBe(201);
    await write.body.dump();
    expect((await getJson(`${url}/api/streams/films/entries/50`)).status).toBe(200);
    // Kept, but without a change or a webhook delivery: said for this write, never silently.
    const unpublished = lines.filter((l) => l.msg === 'an entry hook listener failed after the write' && (l.err as { message?: string } | undefined)?.message?.includes('The change history could not be read'));
    expect(unpublished).toHaveLength(1);
    const changes = await getJson(`${url}/api/streams/films/changes`);
    expect(changes.status).toBe(503);
    expect(changes.json.errors?.[0]?.message).toContain('The change history could not be read');
    const ready = await getJson(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json.details?.realtime).toMatchObject({ history: 'unreadable', error: expect.stringContaining('ENOTDIR') });
  });
});

describe('HistoryLoad', () => {
  const silent = memoryLogger('silent').logger;

  it('reads once, says loading until the read is over, and lets waiters on after it', async () => {
    let reads = 0;
    let finish!: () => void;
    const load = new HistoryLoad(() => {
      reads++;
      return new Promise<void>((resolve) => (finish = resolve));
    }, silent);
    // The node takes traffic meanwhile (requests of the feed wait): ready, with the read in the details.
    expect(load.report()).toEqual({ ready: true, details: { history: 'loading' } });
    const waiting = load.whenReady();
    const again = load.start();
    expect(reads).toBe(1);
    expect(load.ready).toBe(false);
    finish();
    await waiting;
    expect(await again).toBe(true);
    expect(load.ready).toBe(true);
    expect(load.report()).toEqual({ ready: true });
    expect(reads).toBe(1);
  });

  it('a failed read answers 503 to every waiter and is reported, never thrown from start', async () => {
    const { logger, lines } = memoryLogger('error');
    const load = new HistoryLoad(() => Promise.reject(new Error('disk says no')), logger);
    expect(await load.start()).toBe(false);
    const error = await load.whenReady().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(503);
    expect((error as AppError).message).toContain('disk says no');
    expect(load.report()).toEqual({ ready: false, details: { history: 'unreadable', error: 'disk says no' } });
    expect(lines.some((l) => l.level === 50 && String(l.msg).includes('could not be read'))).toBe(true);
    await load.idle();
  });

  it('a read not started before shutdown never starts; one running is waited for', async () => {
    let reads = 0;
    const never = new HistoryLoad(async () => void reads++, silent);
    await never.close();
    expect(await never.start()).toBe(false);
    expect(reads).toBe(0);
    expect(never.report()).toEqual({ ready: false, details: { history: 'closed' } });
    await expect(never.whenReady()).rejects.toMatchObject({ status: 503 });
    let finish!: () => void;
    const running = new HistoryLoad(() => new Promise<void>((resolve) => (finish = resolve)), silent);
    const started = running.start();
    let closed = false;
    const closing = running.close().then(() => (closed = true));
    await Promise.resolve();
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(await started).toBe(true);
  });
});
