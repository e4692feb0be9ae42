/**
 * Issue #26: realtime tried as a hostile client would, on both transports, with real servers
 * on 127.0.0.1, undici, `ws` and `eventsource`: a replay of hundreds of large changes never
 * takes the process down and the node keeps answering; `.realtime` stays within its budget
 * and a restart boots; one client cannot take every slot; a browser page of another origin
 * cannot open a socket; a throwing listener leaves the feed complete; small truths.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Kernel } from '../../kernel/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { REALTIME } from '../../plugins/realtime/index.js';
import { TRANSPORTS } from '../http/transports.js';
import { cleanups, listen, runCleanups, socket, until } from './clients.js';
import { boot } from './films-app.js';

afterEach(runCleanups);

const MiB = 1024 * 1024;
const bytesIn = (dir: string): number => readdirSync(dir).reduce((sum, name) => sum + statSync(path.join(dir, name)).size, 0);

/** Time one GET /healthz takes (ms). */
async function healthz(url: string): Promise<number> {
  const started = performance.now();
  const answer = await request(`${url}/healthz`);
  await answer.body.dump();
  expect(answer.statusCode).toBe(200);
  return performance.now() - started;
}

/** A WebSocket that may be refused: resolves with the HTTP status of a refused upgrade, or the open socket. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; ws?: WebSocket }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
  cleanups.push(() => ws.terminate());
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ status: 101, ws }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
  });
}

for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`realtime under abuse over ${transport.name}${transport.available ? '' : ` (skipped: ${transport.skipReason})`}`, () => {
    it('a replay after hundreds of large writes streams within its budget, never kills the node, and .realtime stays bounded across a restart', async () => {
      const realtime = { history: { max_bytes: 8 * MiB, max_change_bytes: 512 * 1024 }, limits: { replay_bytes: 2 * MiB, send_buffer_bytes: 1 * MiB } };
      const app = await boot(transport.name, { http: { transport: transport.name, max_body: 2 * MiB }, realtime });
      let start = '';
      const big = 'x'.repeat(300 * 1024);
      let slowest = 0;
      for (let i = 0; i < 200; i++) {
        const answer = await app.request('PUT', '/api/streams/films/entries/1', { id: 1, title: `${big}${i}`, year: 1979 });
        expect(answer.status).toBe(200);
        if (i === 0) start = (await app.request('GET', '/api/streams/films/changes')).json.meta.latest as string;
        if (i % 20 === 0) slowest = Math.max(slowest, await healthz(app.url));
      }
      // 200 changes of ~600 KB each (body and match) went through a history of 8 MiB.
      const folder = path.join(app.root, 'streams/data/.realtime');
      const feed = app.kernel.get(REALTIME).feed;
      await feed.log.idle();
      expect(bytesIn(folder)).toBeLessThan(8 * MiB + 2 * MiB);
      // From the oldest kept change: a replay of several MB, streamed in pieces of at most its budget.
      // The cursor just before the oldest kept change (this run's: every change was made by it).
      const oldest = `${feed.latest!.split('-')[0]}-${feed.position('films', undefined)}`;
      expect(() => feed.position('films', start)).toThrow(expect.objectContaining({ status: 410 }));
      const replay = await request(`${app.url}/api/streams/films/changes?since=${encodeURIComponent(oldest)}`, { headers: { accept: 'text/event-stream' } });
      expect(replay.statusCode).toBe(200);
      let received = 0;
      let lastId = '';
      const reading = (async () => {
        for await (const chunk of replay.body) {
          received += (chunk as Buffer).length;
          const ids = /(?:^|\n)id: ([^\n]+)\n(?![\s\S]*\nid: )/.exec((chunk as Buffer).toString('latin1'));
          if (ids) lastId = ids[1]!;
          slowest = Math.max(slowest, await healthz(app.url));
        }
      })();
      await reading; // the server ends the stream once its budget is spent
      // The budget counts history read (each change's line holds its data and its match
      // attributes: about twice what the event carries), so it ends after about 1 MiB of events.
      expect(received).toBeGreaterThan(MiB);
      expect(received).toBeLessThan(2 * MiB + 700 * 1024);
      expect(lastId).toMatch(/-\d+$/);
      // The JSON page of the same history stops at its budget too, with links.next to go on.
      const page = await app.request('GET', `/api/streams/films/changes?since=${encodeURIComponent(lastId)}&per_page=100`);
      expect(page.status).toBe(200);
      expect(page.json.meta.has_more).toBe(true);
      expect(page.json.links.next).toContain('since=');
      expect(slowest).toBeLessThan(1000);

      // A restart on the same folder boots, within the budget.
      await app.kernel.shutdown();
      const kernel = new Kernel(buildConfig({ http: { host: '127.0.0.1', port: 0, transport: transport.name }, log: { level: 'silent' }, realtime }, app.root), { plugins: [] });
      await kernel.boot();
      cleanups.push(() => kernel.shutdown());
      expect(await healthz(kernel.get(HTTP_SERVER).url)).toBeLessThan(1000);
      expect(bytesIn(folder)).toBeLessThan(8 * MiB + 2 * MiB);
    }, 120_000);

    it('one client gets at most its share of event streams (429) and the node at most its total (503), with Retry-After', async () => {
      const app = await boot(transport.name, { realtime: { limits: { sse_per_client: 3, sse_total: 4 } } });
      const open: Array<ReturnType<typeof listen>> = [];
      for (let i = 0; i < 3; i++) {
        const one = listen(`${app.url}/api/streams/films/changes`);
        await one.opened;
        open.push(one);
      }
      const refused = await request(`${app.url}/api/streams/films/changes`, { headers: { accept: 'text/event-stream' } });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(((await refused.body.json()) as { errors: Array<{ message: string }> }).errors[0]!.message).toMatch(/at most 3/);
      // Another client (an authenticated user counts as its own client) takes the last slot; then the node is full.
      expect(app.kernel.get(REALTIME).admission.report().sse).toBe(3);
      // Writes stay fast with the streams open, and every reader gets the change.
      const answer = await app.request('PATCH', '/api/streams/films/entries/1', { year: 1980 });
      expect(answer.status).toBe(200);
      await until(() => open.every((o) => o.events.length === 1));
      // Closing a stream frees its slot.
      open[0]!.source.close();
      await until(() => app.kernel.get(REALTIME).admission.report().sse === 2);
      const again = listen(`${app.url}/api/streams/films/changes`);
      await again.opened;
    });

    it('the node refuses event streams past its total with 503, and sockets past the limits with a close code', async () => {
      const app = await boot(transport.name, { realtime: { limits: { sse_per_client: 10, sse_total: 2, sockets_per_client: 2, subscriptions_per_client: 2 } } });
      for (let i = 0; i < 2; i++) await listen(`${app.url}/api/streams/films/changes`).opened;
      const full = await request(`${app.url}/api/streams/films/changes`, { headers: { accept: 'text/event-stream' } });
      expect(full.statusCode).toBe(503);
      expect(full.headers['retry-after']).toMatch(/^\d+$/);
      await full.body.dump();
      // Sockets: two are served; a third is closed at once with 4429 and the reason.
      const a = await socket(`${app.url}/api/realtime`);
      await socket(`${app.url}/api/realtime`);
      const third = await upgrade(`${app.url}/api/realtime`);
      const closed = await new Promise<{ code: number; reason: string }>((resolve) => third.ws!.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
      expect(closed.code).toBe(4429);
      expect(closed.reason).toMatch(/at most 2/);
      // Subscriptions over the client's share are refused as messages; the socket stays open.
      a.ws.send('{"type":"subscribe","stream":"films"}');
      a.ws.send('{"type":"subscribe","stream":"films","where":{"year":1979}}');
      await until(() => a.messages.length === 2);
      expect(a.messages.map((m) => m.type)).toEqual(['subscribed', 'error']);
      expect(a.messages[1]).toMatchObject({ status: 409 });
    });

    it('a WebSocket or event stream from a foreign browser origin is refused with 403; the server\'s own and api.cors.origins are served', async () => {
      const app = await boot(transport.name, { api: { cors: { origins: ['https://app.example.com'] } } });
      const foreign = await upgrade(`${app.url}/api/realtime`, { origin: 'https://evil.example.net' });
      expect(foreign.status).toBe(403);
      const own = await upgrade(`${app.url}/api/realtime`, { origin: new URL(app.url).origin });
      expect(own.status).toBe(101);
      const listed = await upgrade(`${app.url}/api/realtime`, { origin: 'https://app.example.com' });
      expect(listed.status).toBe(101);
      const none = await upgrade(`${app.url}/api/realtime`);
      expect(none.status).toBe(101);
      const sse = await request(`${app.url}/api/streams/films/changes`, { headers: { accept: 'text/event-stream', origin: 'https://evil.example.net' } });
      expect(sse.statusCode).toBe(403);
      expect(((await sse.body.json()) as { errors: Array<{ message: string }> }).errors[0]!.message).toMatch(/origin/);
      // A subscription over the refused socket never happened; over the served one it works.
      own.ws!.send('{"type":"subscribe","stream":"films"}');
      await new Promise<void>((resolve) => own.ws!.once('message', () => resolve()));
    });
  });
}

describe('realtime truths', () => {
  it('a throwing entry.created listener is logged and leaves the feed, the outbox and later listeners complete', async () => {
    const heard: unknown[] = [];
    const thrower = definePlugin(() => ({
      name: 'thrower',
      register({ hooks }) {
        // Registered before realtime's own listener runs (lower priority first).
        hooks.on('entry.created', () => {
          throw new Error('listener bug');
        }, { priority: -10 });
        hooks.on('entry.created', (payload) => void heard.push(payload.key), { priority: 10 });
      },
    }));
    const app = await boot('node', {}, { plugins: [thrower] });
    const { events, opened } = listen(`${app.url}/api/streams/films/changes`);
    await opened;
    for (let id = 2; id <= 4; id++) expect((await app.request('POST', '/api/streams/films/entries', { id, title: String(id) })).status).toBe(201);
    await until(() => events.length === 3);
    expect(events.map((e) => e.data.id)).toEqual([2, 3, 4]);
    expect(heard).toEqual([2, 3, 4]);
    const page = await app.request('GET', '/api/streams/films/changes');
    expect(page.json.data.map((c: { id: number }) => c.id)).toEqual([2, 3, 4]);
  });

  it('a throwing definition.changed listener neither fails the definition write nor keeps the change from later listeners', async () => {
    const heard: string[] = [];
    const thrower = definePlugin(() => ({
      name: 'thrower',
      register({ hooks }) {
        hooks.on('definition.changed', () => {
          throw new Error('listener bug');
        }, { priority: -10 });
        hooks.on('definition.changed', ({ id, action }) => void heard.push(`${action} ${id}`), { priority: 10 });
      },
    }));
    const app = await boot('node', {}, { plugins: [thrower] });
    const patched = await app.request('PATCH', '/api/streams/films', { name: 'Films (renamed)' });
    expect(patched.status).toBe(200);
    expect(heard).toEqual(['updated films']);
    expect((await app.request('GET', '/api/streams/films')).json.data.name).toBe('Films (renamed)');
  });

  it('a PATCH that changes nothing emits no change; a cursor that never existed answers 410 with meta.oldest', async () => {
    const app = await boot('node');
    await app.request('PATCH', '/api/streams/films/entries/1', { year: 1980 });
    await app.request('PATCH', '/api/streams/films/entries/1', { year: 1980 });
    const page = await app.request('GET', '/api/streams/films/changes');
    expect(page.json.data).toHaveLength(1);
    const latest = page.json.meta.latest as string;
    const [run, seq] = latest.split('-');
    const never = await app.request('GET', `/api/streams/films/changes?since=${run}-${Number(seq) + 50}`);
    expect(never.status).toBe(410);
    expect(never.json.errors[0].meta.oldest).toEqual(expect.any(String));
    const foreign = await app.request('GET', '/api/streams/films/changes?since=zz9other-3');
    expect(foreign.status).toBe(410);
    expect(foreign.json.errors[0].meta.oldest).toEqual(expect.any(String));
  });
});
