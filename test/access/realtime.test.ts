/**
 * Issue #28 on the change feeds: SSE, WebSocket and the JSON page deliver a change only to
 * subscribers who may see the entry; a move out of (into) a subscriber's view reaches it as
 * `deleted` (`created`); hidden fields never travel. Both transports.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS } from '../http/transports.js';
import { cleanups, listen, runCleanups, socket, until, type Seen } from '../realtime/clients.js';
import { bearer, startAccessApp, type AccessApp } from './fixture.js';

afterEach(runCleanups);

/** EventSource with an Authorization header (the eventsource package takes a fetch). */
function listenAs(url: string, token?: string) {
  if (token === undefined) return listen(url);
  return listen(url, { fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } }) });
}

const summary = (events: Seen[]) => events.map((e) => `${e.event}:${String(e.data.id)}`);

for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`access on the change feeds (${transport.name})`, () => {
    let s: AccessApp;
    beforeAll(async () => {
      s = await startAccessApp({ transport: transport.name });
    });
    afterAll(async () => s?.app.close());
    const admin = (method: string, path: string, body?: unknown) => s.app.request(method, path, body, bearer(s.tokens.boss));

    it('SSE and WebSocket: each subscriber gets the changes of what it may see, moves across its view as deleted/created, no hidden field', async () => {
      const url = `${s.app.url}/api/streams/posts/changes`;
      const anonymous = listenAs(url);
      const alice = listenAs(url, s.tokens.alice);
      const boss = listenAs(url, s.tokens.boss);
      await Promise.all([anonymous.opened, alice.opened, boss.opened]);
      const ws = await socket(`${s.app.url}/api/realtime`, bearer(s.tokens.bob));
      ws.ws.send(JSON.stringify({ type: 'subscribe', stream: 'posts' }));
      await until(() => ws.messages.some((m) => m.type === 'subscribed'), 10_000).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify(ws.messages)}`);
      });

      expect((await admin('PATCH', '/api/streams/posts/entries/4', { status: 'published' })).status).toBe(200); // bob's draft goes public
      expect((await admin('PATCH', '/api/streams/posts/entries/1', { status: 'draft' })).status).toBe(200); // alice's post leaves the public view
      expect((await admin('PATCH', '/api/streams/posts/entries/2', { title: 'quiet' })).status).toBe(200); // alice's draft: only alice and admins
      expect((await admin('POST', '/api/streams/posts/entries', { id: 7, title: 'new', status: 'published', author_id: 'carol', notes: 'secret' })).status).toBe(201);
      expect((await admin('DELETE', '/api/streams/posts/entries/3')).status).toBe(204);

      const bobChanges = () => ws.messages.filter((m) => m.stream === 'posts' && m.type !== 'subscribed').map((m) => `${String(m.type)}:${String(m.id)}`);
      await until(() => boss.events.length === 5 && anonymous.events.length === 4 && alice.events.length === 5 && bobChanges().length === 4, 10_000).catch((error: unknown) => {
        throw new Error(`${String(error)}: ${JSON.stringify({ boss: summary(boss.events), anonymous: summary(anonymous.events), alice: summary(alice.events), bob: bobChanges() })}`);
      });
      expect(summary(boss.events)).toEqual(['updated:4', 'updated:1', 'updated:2', 'created:7', 'deleted:3']);
      expect(summary(anonymous.events)).toEqual(['created:4', 'deleted:1', 'created:7', 'deleted:3']);
      // Alice authored 1 and 2: she keeps seeing them; 4 enters her view as it is published.
      expect(summary(alice.events)).toEqual(['created:4', 'updated:1', 'updated:2', 'created:7', 'deleted:3']);
      // Bob authored 4 (his draft, then published) and 3; 1 leaves his view; alice's draft 2 never reaches him.
      expect(bobChanges()).toEqual(['updated:4', 'deleted:1', 'created:7', 'deleted:3']);
      for (const event of anonymous.events) if (event.data.data) expect('notes' in event.data.data).toBe(false);
      expect(boss.events.find((e) => e.data.id === 7)!.data.data).toMatchObject({ notes: 'secret' });
      expect(anonymous.events.find((e) => e.data.id === 1)!.data.data).toBeNull();
    });

    it('the JSON page of changes is narrowed the same way; a stream without rules is 401/403', async () => {
      const page = await s.app.request('GET', '/api/streams/posts/changes');
      expect(page.status).toBe(200);
      for (const change of page.json.data) {
        if (change.data) expect('notes' in change.data).toBe(false);
      }
      const adminPage = await s.app.request('GET', '/api/streams/posts/changes', undefined, bearer(s.tokens.boss));
      expect(adminPage.json.data.length).toBeGreaterThan(page.json.data.length);
      expect((await s.app.request('GET', '/api/streams/audit/changes')).status).toBe(401);
      expect((await s.app.request('GET', '/api/streams/audit/changes', undefined, bearer(s.tokens.alice))).status).toBe(403);
      const ws = await socket(`${s.app.url}/api/realtime`, bearer(s.tokens.alice));
      ws.ws.send(JSON.stringify({ type: 'subscribe', stream: 'audit' }));
      await until(() => ws.messages.some((m) => m.type === 'error'), 10_000);
      expect(ws.messages.find((m) => m.type === 'error')).toMatchObject({ status: 403, stream: 'audit' });
      // A hidden field cannot filter a subscription either.
      expect((await s.app.request('GET', '/api/streams/posts/changes?where[notes]=n1')).status).toBe(400);
    });

    it('a replay from a cursor is narrowed like the live feed', async () => {
      const first = await s.app.request('GET', '/api/streams/posts/changes', undefined, bearer(s.tokens.boss));
      const since = first.json.data[0].cursor as string;
      const replay = listenAs(`${s.app.url}/api/streams/posts/changes?since=${encodeURIComponent(since)}`);
      await replay.opened;
      await until(() => replay.events.length >= 3, 10_000);
      expect(summary(replay.events).slice(0, 3)).toEqual(['deleted:1', 'created:7', 'deleted:3']);
    });
  });
}
void cleanups;
