import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, Kernel } from '../../kernel/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { REALTIME } from '../../plugins/realtime/index.js';
import type { TestApp } from '../helpers/app.js';
import { TRANSPORTS } from '../http/transports.js';
import { cleanups, listen, runCleanups, socket, until } from './clients.js';
import { boot, films } from './films-app.js';

/**
 * Issue #19 against a real server per transport, with real clients: the `eventsource`
 * package (what browsers' EventSource does), the `ws` package, undici, and a webhook
 * receiver on 127.0.0.1.
 */
afterEach(runCleanups);

for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`realtime over ${transport.name}${transport.available ? '' : ` (skipped: ${transport.skipReason})`}`, () => {
    it('Server-Sent Events: created, updated and deleted arrive within 1 s, protected fields hidden', async () => {
      const app = await boot(transport.name);
      const { events, opened } = listen(`${app.url}/api/streams/films/changes`);
      await opened;
      const started = Date.now();
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'Aliens', year: 1986, secret: 'xenomorph' });
      await app.request('PATCH', '/api/streams/films/entries/2', { year: 1987 });
      await app.request('DELETE', '/api/streams/films/entries/2');
      await until(() => events.length === 3, 1000);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(events.map((e) => e.event)).toEqual(['created', 'updated', 'deleted']);
      expect(events[0]!.data).toEqual({ stream: 'films', id: 2, data: { id: 2, title: 'Aliens', year: 1986 } });
      expect(events[1]!.data.data).toMatchObject({ year: 1987 });
      expect(events[2]!.data).toEqual({ stream: 'films', id: 2, data: null });
      // Cursors order the changes.
      const seqs = events.map((e) => Number(e.id.split('-')[1]));
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    });

    it('resumes with Last-Event-ID (and ?since=): exactly the missed changes, then live, no gap, no duplicate', async () => {
      const app = await boot(transport.name);
      const first = listen(`${app.url}/api/streams/films/changes`);
      await first.opened;
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
      await until(() => first.events.length === 1);
      first.source.close();
      const last = first.events[0]!.id;
      for (const id of [3, 4, 5]) await app.request('POST', '/api/streams/films/entries', { id, title: String(id) });

      // Last-Event-ID as EventSource sends it when it reconnects.
      const headers = { 'Last-Event-ID': last };
      const resumed = listen(`${app.url}/api/streams/films/changes`, {
        fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
      });
      await until(() => resumed.events.length === 3);
      expect(resumed.events.map((e) => e.data.id)).toEqual([3, 4, 5]);
      await app.request('POST', '/api/streams/films/entries', { id: 6, title: 'six' });
      await until(() => resumed.events.length === 4);
      expect(resumed.events.map((e) => e.data.id)).toEqual([3, 4, 5, 6]);

      const since = listen(`${app.url}/api/streams/films/changes?since=${encodeURIComponent(resumed.events[1]!.id)}`);
      await until(() => since.events.length === 2);
      expect(since.events.map((e) => e.data.id)).toEqual([5, 6]);
    });

    it('an EventSource that loses its connection reconnects by itself with Last-Event-ID and misses nothing', async () => {
      const app = await boot(transport.name);
      const { events, opened } = listen(`${app.url}/api/streams/films/changes`);
      await opened;
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
      await until(() => events.length === 1);
      // The server ends every open stream (as a proxy or a deploy would cut it).
      for (const sink of [...app.kernel.get(REALTIME).open]) sink.end();
      await app.request('POST', '/api/streams/films/entries', { id: 3, title: 'three' });
      await app.request('PATCH', '/api/streams/films/entries/2', { title: 'two!' });
      // `retry: 2000` tells the client to come back after 2 s.
      await until(() => events.length === 3, 5000);
      await app.request('DELETE', '/api/streams/films/entries/3');
      await until(() => events.length === 4);
      await new Promise((r) => setTimeout(r, 100));
      expect(events.map((e) => `${e.event} ${String(e.data.id)}`)).toEqual(['created 2', 'created 3', 'updated 2', 'deleted 3']);
    }, 15000);

    it('an event stream that never opens (HEAD, a client gone before the answer) leaves no subscriber behind', async () => {
      const app = await boot(transport.name);
      const { feed } = app.kernel.get(REALTIME);
      for (let i = 0; i < 5; i++) {
        const head = await request(`${app.url}/api/streams/films/changes`, { method: 'HEAD', headers: { accept: 'text/event-stream' } });
        await head.body.dump();
        expect(head.statusCode).toBe(200);
      }
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
      expect(feed.subscribers).toBe(0);
    });

    it('filters events with where[...] like the list endpoint; a bad filter is a 400', async () => {
      const app = await boot(transport.name);
      const { events, opened } = listen(`${app.url}/api/streams/films/changes?where[year]=1990&constraint[year]=>`);
      await opened;
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'old', year: 1980 });
      await app.request('POST', '/api/streams/films/entries', { id: 3, title: 'new', year: 2001 });
      await until(() => events.length === 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(events.map((e) => e.data.id)).toEqual([3]);
      const bad = await app.request('GET', '/api/streams/films/changes?where[year]=1&constraint[year]=bogus', undefined, { accept: 'text/event-stream' });
      expect(bad.status).toBe(400);
      // A protected field may not steer a filter (it would reveal itself), as on the list endpoint.
      const probing = await app.request('GET', '/api/streams/films/changes?where[secret]=x', undefined, { accept: 'text/event-stream' });
      expect(probing.status).toBe(400);
      expect(probing.json.errors[0].message).toMatch(/protected/);
    });

    it('a cursor older than the kept history answers 410 with the oldest cursor; a malformed one 400', async () => {
      const app = await boot(transport.name, { realtime: { history: { count: 2 } } });
      const page = async (query = ''): Promise<Awaited<ReturnType<TestApp['request']>>> => app.request('GET', `/api/streams/films/changes${query}`);
      for (const id of [2, 3, 4, 5]) await app.request('POST', '/api/streams/films/entries', { id, title: String(id) });
      const all = await page();
      expect(all.status).toBe(200);
      expect(all.json.data.map((c: { id: number }) => c.id)).toEqual([4, 5]);
      const first = all.json.data[0].cursor as string;
      const [run, seq] = first.split('-');
      const gone = await page(`?since=${run}-${Number(seq) - 2}`);
      expect(gone.status).toBe(410);
      expect(gone.json.errors[0].meta.oldest).toMatch(/-/);
      expect((await page(`?since=${encodeURIComponent(gone.json.errors[0].meta.oldest)}`)).json.data.map((c: { id: number }) => c.id)).toEqual([4, 5]);
      expect((await page('?since=not-a-cursor')).status).toBe(400);
    });

    it('history is bounded by age too, even on a stream that stays idle: past max_age_seconds a cursor is 410', async () => {
      const app = await boot(transport.name, { realtime: { history: { max_age_seconds: 1 } } });
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
      const before = await app.request('GET', '/api/streams/films/changes');
      expect(before.json.data.map((c: { id: number }) => c.id)).toEqual([2]);
      const [run, seq] = (before.json.data[0].cursor as string).split('-');
      const start = `${run}-${Number(seq) - 1}`;
      expect((await app.request('GET', `/api/streams/films/changes?since=${start}`)).json.data).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 1100));
      expect((await app.request('GET', '/api/streams/films/changes')).json.data).toEqual([]);
      const gone = await app.request('GET', `/api/streams/films/changes?since=${start}`, undefined, { accept: 'text/event-stream' });
      expect(gone.status).toBe(410);
    });

    it('JSON pages for polling clients: the changes after ?since=, with the next cursor', async () => {
      const app = await boot(transport.name);
      for (const id of [2, 3, 4]) await app.request('POST', '/api/streams/films/entries', { id, title: String(id) });
      const first = await app.request('GET', '/api/streams/films/changes?per_page=2');
      expect(first.json.data.map((c: { event: string; id: number }) => `${c.event} ${c.id}`)).toEqual(['created 2', 'created 3']);
      expect(first.json.meta.has_more).toBe(true);
      const next = await app.request('GET', `/api/streams/films/changes?since=${encodeURIComponent(first.json.meta.cursor)}`);
      expect(next.json.data.map((c: { id: number }) => c.id)).toEqual([4]);
      expect(next.json.data[0]).toMatchObject({ stream: 'films', event: 'created', data: { id: 4, title: '4' } });
      expect((await app.request('GET', '/api/streams/nope/changes')).status).toBe(404);
    });

    it('WebSocket: subscribe, get "subscribed", then each change with its cursor; errors as messages', async () => {
      const app = await boot(transport.name);
      const { ws, messages } = await socket(`${app.url}/api/realtime`);
      ws.send(JSON.stringify({ type: 'subscribe', stream: 'films', where: { year: 1986 } }));
      await until(() => messages.length === 1);
      expect(messages[0]).toMatchObject({ type: 'subscribed', stream: 'films' });
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'Aliens', year: 1986, secret: 'x' });
      await app.request('POST', '/api/streams/films/entries', { id: 3, title: 'Other', year: 2000 });
      await until(() => messages.length === 2);
      await new Promise((r) => setTimeout(r, 100));
      expect(messages).toHaveLength(2);
      expect(messages[1]).toEqual({ type: 'created', stream: 'films', id: 2, data: { id: 2, title: 'Aliens', year: 1986 }, cursor: expect.stringMatching(/^[0-9a-z]+-\d+$/) });
      ws.send(JSON.stringify({ type: 'subscribe', stream: 'nope' }));
      ws.send('not json');
      await until(() => messages.length === 4);
      expect(messages.find((m) => m.stream === 'nope')).toMatchObject({ type: 'error', status: 404 });
      expect(messages.find((m) => m.type === 'error' && m.stream === undefined)).toMatchObject({ status: 400 });
      // A plain GET of the socket endpoint says how to use it.
      expect((await app.request('GET', '/api/realtime')).status).toBe(426);
    });

    it('WebSocket: a whole-stream subscription rides native pub/sub on uWS; since replays first; unsubscribe stops it', async () => {
      const app = await boot(transport.name);
      const { feed } = app.kernel.get(REALTIME);
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
      const cursor = (await app.request('GET', '/api/streams/films/changes')).json.meta.cursor as string;
      await app.request('POST', '/api/streams/films/entries', { id: 3, title: 'three' });
      const { ws, messages } = await socket(`${app.url}/api/realtime`);
      ws.send(JSON.stringify({ type: 'subscribe', stream: 'films', since: cursor }));
      await until(() => messages.length === 2);
      // uWS fans a whole-stream subscription out itself (a topic); node:http listens on the feed.
      expect(feed.subscribers).toBe(transport.name === 'uws' ? 0 : 1);
      await app.request('POST', '/api/streams/films/entries', { id: 4, title: 'four' });
      await until(() => messages.length === 3);
      expect(messages.map((m) => `${String(m.type)} ${String(m.id)}`)).toEqual(['subscribed undefined', 'created 3', 'created 4']);
      ws.send(JSON.stringify({ type: 'unsubscribe', stream: 'films' }));
      await until(() => messages.length === 4);
      expect(messages[3]).toEqual({ type: 'unsubscribed', stream: 'films' });
      await app.request('POST', '/api/streams/films/entries', { id: 5, title: 'five' });
      await new Promise((r) => setTimeout(r, 150));
      expect(messages).toHaveLength(4);
      ws.send(JSON.stringify({ type: 'subscribe', stream: 'films', since: messages[2]!.cursor }));
      await until(() => messages.length === 6);
      expect(messages.slice(4).map((m) => `${String(m.type)} ${String(m.id)}`)).toEqual(['subscribed undefined', 'created 5']);
    });

    it('the gate refuses a subscription with its own status, over SSE and WebSocket alike', async () => {
      const app = await boot(transport.name, { api: { enabled: false, gate_except: ['api/realtime', 'api/streams/open/*'] } }, {
        streams: { films, open: { fields: { id: 'integer' } } },
      });
      // The gate's status (api.gate_status, 404 by default), over SSE and WebSocket alike.
      const refused = await app.request('GET', '/api/streams/films/changes', undefined, { accept: 'text/event-stream' });
      expect(refused.status).toBe(404);
      const { ws, messages } = await socket(`${app.url}/api/realtime`);
      ws.send(JSON.stringify({ type: 'subscribe', stream: 'films' }));
      ws.send(JSON.stringify({ type: 'subscribe', stream: 'open' }));
      await until(() => messages.length === 2);
      expect(messages.find((m) => m.stream === 'films')).toMatchObject({ type: 'error', status: 404 });
      expect(messages.find((m) => m.stream === 'open')).toMatchObject({ type: 'subscribed' });
    });

    it('the interface middleware applies too: auth (401 for SSE and the upgrade, a token subscribes) and throttle (429)', async () => {
      const app = await boot(transport.name, { api: { middleware: ['auth.bearer'], auth: { tokens: ['a-token-of-ours'] } } });
      expect((await app.request('GET', '/api/streams/films/changes', undefined, { accept: 'text/event-stream' })).status).toBe(401);
      await expect(socket(`${app.url}/api/realtime`)).rejects.toThrow(/401/);
      const { ws, messages } = await socket(`${app.url}/api/realtime`, { authorization: 'Bearer a-token-of-ours' });
      ws.send('{"type":"subscribe","stream":"films"}');
      await until(() => messages.length === 1);
      expect(messages[0]).toMatchObject({ type: 'subscribed', stream: 'films' });
      const sse = listen(`${app.url}/api/streams/films/changes`, {
        fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: 'Bearer a-token-of-ours' } }),
      });
      await sse.opened;

      const throttled = await boot(transport.name, { api: { middleware: ['throttle:3,1'] } });
      const client = await socket(`${throttled.url}/api/realtime`); // the upgrade is request 1
      client.ws.send('{"type":"subscribe","stream":"films"}'); // 2
      client.ws.send('{"type":"unsubscribe","stream":"films"}');
      await until(() => client.messages.length === 2);
      client.ws.send('{"type":"subscribe","stream":"films"}'); // 3
      await until(() => client.messages.length === 3);
      client.ws.send('{"type":"unsubscribe","stream":"films"}');
      client.ws.send('{"type":"subscribe","stream":"films"}'); // 4: spent
      await until(() => client.messages.length === 5);
      expect(client.messages.map((m) => m.type)).toEqual(['subscribed', 'unsubscribed', 'subscribed', 'unsubscribed', 'error']);
      expect(client.messages[4]).toMatchObject({ status: 429, stream: 'films' });
      expect((await throttled.request('GET', '/api/streams/films/changes', undefined, { accept: 'text/event-stream' })).status).toBe(429);
    });

    it('1,000 concurrent WebSocket subscribers all receive one change within 2 s', async () => {
      // One test client is one address: the per-client caps are raised for it.
      const app = await boot(transport.name, { realtime: { limits: { sockets_per_client: 1000, subscriptions_per_client: 1000 } } });
      const clients = await Promise.all(Array.from({ length: 1000 }, () => socket(`${app.url}/api/realtime`)));
      for (const { ws } of clients) ws.send('{"type":"subscribe","stream":"films"}');
      await until(() => clients.every((c) => c.messages.length === 1), 10000);
      const started = Date.now();
      await app.request('PATCH', '/api/streams/films/entries/1', { year: 1980 });
      await until(() => clients.every((c) => c.messages.length === 2), 2000);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(new Set(clients.map((c) => c.messages[1]!.cursor)).size).toBe(1);
    }, 30000);

    it('an EventSource resumes across a server restart with Last-Event-ID: exactly the missed changes, then live', async () => {
      const app = await boot(transport.name);
      const first = listen(`${app.url}/api/streams/films/changes`);
      await first.opened;
      await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
      await until(() => first.events.length === 1);
      first.source.close();
      await app.request('POST', '/api/streams/films/entries', { id: 3, title: 'three' });
      // Restart on the same folder.
      await app.kernel.shutdown();
      const kernel = new Kernel(buildConfig({ http: { host: '127.0.0.1', port: 0, transport: transport.name }, log: { level: 'silent' } }, app.root), { plugins: [] });
      await kernel.boot();
      cleanups.push(() => kernel.shutdown());
      const url = kernel.get(HTTP_SERVER).url;
      const post = (body: unknown): Promise<void> =>
        request(`${url}/api/streams/films/entries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.body.dump());
      await post({ id: 4, title: 'four' });
      const resumed = listen(`${url}/api/streams/films/changes`, {
        fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'Last-Event-ID': first.events[0]!.id } }),
      });
      await until(() => resumed.events.length === 2);
      await post({ id: 5, title: 'five' });
      await until(() => resumed.events.length === 3);
      await new Promise((r) => setTimeout(r, 100));
      expect(resumed.events.map((e) => `${e.event} ${String(e.data.id)}`)).toEqual(['created 3', 'created 4', 'created 5']);
      // The JSON page resumes from the same cursor.
      const page = await request(`${url}/api/streams/films/changes?since=${encodeURIComponent(first.events[0]!.id)}`);
      expect(page.statusCode).toBe(200);
      expect(((await page.body.json()) as { data: Array<{ id: number }> }).data.map((c) => c.id)).toEqual([3, 4, 5]);
      // A cursor of another server (another node behind the same balancer) means nothing here: 410, not a wrong replay.
      const foreign = await request(`${url}/api/streams/films/changes?since=${encodeURIComponent('zz0other0node-2')}`);
      expect(foreign.statusCode).toBe(410);
      await foreign.body.dump();
    });

    it('an idle Server-Sent Events stream gets a heartbeat comment every heartbeat_seconds', async () => {
      const app = await boot(transport.name, { realtime: { heartbeat_seconds: 1 } });
      const answer = await request(`${app.url}/api/streams/films/changes`, { headers: { accept: 'text/event-stream' } });
      cleanups.push(() => void answer.body.destroy());
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      let text = '';
      answer.body.on('data', (chunk: Buffer) => (text += chunk.toString()));
      await until(() => text.split(': heartbeat\n\n').length >= 3, 3500);
      expect(text.startsWith('retry: 2000\n: connected\n\n: heartbeat\n\n')).toBe(true);
    });

    it('200 concurrent EventSource subscribers all receive one change within 2 s', async () => {
      const app = await boot(transport.name, { realtime: { limits: { sse_per_client: 200 } } });
      const clients = Array.from({ length: 200 }, () => listen(`${app.url}/api/streams/films/changes`));
      await Promise.all(clients.map((c) => c.opened));
      const started = Date.now();
      await app.request('PATCH', '/api/streams/films/entries/1', { year: 1980 });
      await until(() => clients.every((c) => c.events.length === 1), 2000);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(new Set(clients.map((c) => c.events[0]!.id)).size).toBe(1);
    }, 30000);

    it('a change made on disk is a change: it reaches subscribers', async () => {
      const app = await boot(transport.name);
      expect((await app.request('GET', '/api/streams/films/entries/1')).status).toBe(200);
      const { events, opened } = listen(`${app.url}/api/streams/films/changes`);
      await opened;
      writeFileSync(path.join(app.root, 'streams/data/films/1.json'), JSON.stringify({ id: 1, title: 'Alien (edited)', year: 1979 }));
      await until(() => events.length === 1, 2000);
      expect(events[0]).toMatchObject({ event: 'updated', data: { id: 1, data: { title: 'Alien (edited)' } } });
    });
  });
}
