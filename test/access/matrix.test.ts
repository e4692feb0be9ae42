/**
 * Issue #28, the matrix: roles × actions × paths, on every built-in source (filebase, file,
 * self, and MongoDB's `database` on the stand-in replica set) and on both transports. Each
 * answer must have exactly the status and the rows the rules allow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { TRANSPORTS } from '../http/transports.js';
import { ON_STAND_IN, StandInServer } from '../mongodb/fake-server.js';
import { nodeConfig, standInPlugin } from '../mongodb/stand-in-app.js';
import { bearer, ids, LEGACY_TOKEN, PARTNER_KEY, POSTS, POSTS_ACCESS, POSTS_FIELDS, startAccessApp, type AccessApp, type SourceName } from './fixture.js';

type Caller = 'anonymous' | 'reader' | 'alice' | 'bob' | 'partner' | 'boss' | 'legacy';

function headersOf(s: AccessApp, caller: Caller): Record<string, string> | undefined {
  switch (caller) {
    case 'anonymous':
      return undefined;
    case 'reader':
      return bearer('reader-api-key-0123456789');
    case 'partner':
      return bearer(PARTNER_KEY);
    case 'legacy':
      return bearer(LEGACY_TOKEN);
    default:
      return bearer(s.tokens[caller]);
  }
}

/** Rows each caller may list: public = published (1, 3); an author also its own drafts; admins all. */
const LISTED: Record<Caller, number[]> = {
  anonymous: [1, 3],
  reader: [1, 3],
  alice: [1, 2, 3],
  bob: [1, 3, 4],
  partner: [1, 3],
  boss: [1, 2, 3, 4],
  legacy: [1, 2, 3, 4],
};
const CALLERS = Object.keys(LISTED) as Caller[];
const SEES_NOTES = new Set<Caller>(['alice', 'bob', 'partner', 'boss', 'legacy']);

function readMatrix(setup: () => AccessApp) {
  const call = (caller: Caller, method: string, path: string, body?: unknown) => setup().app.request(method, path, body, headersOf(setup(), caller));

  it.each(CALLERS)('list: %s gets exactly its rows, their count and never a hidden field', async (caller) => {
    const res = await call(caller, 'GET', '/api/streams/posts/entries');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(LISTED[caller]);
    expect(res.json.meta.total).toBe(LISTED[caller].length);
    for (const row of res.json.data) expect('notes' in row).toBe(SEES_NOTES.has(caller));
  });

  it.each(CALLERS)('show: %s gets 200 inside its view rule and 404 outside, as if the entry did not exist', async (caller) => {
    for (const post of POSTS) {
      const res = await call(caller, 'GET', `/api/streams/posts/entries/${post.id}`);
      const visible = LISTED[caller].includes(post.id);
      expect([post.id, res.status]).toEqual([post.id, visible ? 200 : 404]);
      if (visible) expect('notes' in res.json.data).toBe(SEES_NOTES.has(caller));
      else expect(res.json.errors[0].message).toBe(`Entry [${post.id}] not found.`);
    }
    expect((await call(caller, 'GET', '/api/streams/posts/entries/99')).status).toBe(404);
  });

  it.each(CALLERS)('query and filters: %s, narrowed by the rule under its own criteria', async (caller) => {
    const drafts = await call(caller, 'POST', '/api/streams/posts/query', { parameters: [{ where: ['status', '=', 'draft'] }, { orWhere: ['id', '=', 1] }] });
    expect(drafts.status).toBe(200);
    expect(ids(drafts)).toEqual(LISTED[caller].filter((id) => id === 1 || POSTS[id - 1]!.status === 'draft'));
    expect(drafts.json.meta.total).toBe(ids(drafts).length);
    const byAuthor = await call(caller, 'GET', '/api/streams/posts/entries?where[author_id]=bob');
    expect(ids(byAuthor)).toEqual(LISTED[caller].filter((id) => POSTS[id - 1]!.author_id === 'bob'));
  });

  it('hidden fields cannot steer a filter or a sort (400), for the callers they are hidden from only', async () => {
    for (const path of ['/api/streams/posts/entries?where[notes]=n1', '/api/streams/posts/entries?orderBy[notes]=asc']) {
      expect((await call('anonymous', 'GET', path)).status).toBe(400);
      expect((await call('alice', 'GET', path)).status).toBe(200);
    }
    expect((await call('anonymous', 'POST', '/api/streams/posts/query', { parameters: [{ where: ['notes', 'LIKE', 'n%'] }] })).status).toBe(400);
  });

  it('eager loading embeds a related entry only where the caller may view it, without its hidden fields', async () => {
    const anonymous = await call('anonymous', 'GET', '/api/streams/posts/entries?with=writer');
    const byId = new Map(anonymous.json.data.map((p: { id: number; writer: unknown }) => [p.id, p.writer]));
    expect(byId.get(1)).toEqual({ id: 1, name: 'Alice', visible: true });
    expect(byId.get(3)).toBeNull(); // Bob's profile is not visible to the public
    const alice = await call('alice', 'GET', '/api/streams/posts/entries/3?with=writer');
    expect(alice.json.data.writer).toMatchObject({ id: 2, email: 'bob@example.test' });
    const show = await call('anonymous', 'GET', '/api/streams/posts/entries/3?with=writer');
    expect(show.json.data.writer).toBeNull();
  });

  it('a definition never shows its rules or inline rows to a non-administrator', async () => {
    const shown = await call('anonymous', 'GET', '/api/streams/posts');
    expect(shown.status).toBe(200);
    expect(shown.json.data.access).toBeUndefined();
    expect(shown.json.data.data).toBeUndefined();
    const listed = await call('alice', 'GET', '/api/streams');
    for (const definition of listed.json.data) expect(definition.data).toBeUndefined();
  });

  it('a stream without rules is for administrators only: 401 anonymous, 403 others', async () => {
    expect((await call('anonymous', 'GET', '/api/streams/audit/entries')).status).toBe(401);
    expect((await call('alice', 'GET', '/api/streams/audit/entries')).status).toBe(403);
    expect((await call('reader', 'GET', '/api/streams/audit/entries/1')).status).toBe(403);
    expect((await call('boss', 'GET', '/api/streams/audit/entries')).status).toBe(200);
    expect((await call('legacy', 'GET', '/api/streams/audit/entries/1')).status).toBe(200);
  });
}

function writeMatrix(setup: () => AccessApp, fresh: () => Promise<void>) {
  const call = (caller: Caller, method: string, path: string, body?: unknown) => setup().app.request(method, path, body, headersOf(setup(), caller));
  it('create: the new entry must satisfy the create rule (403), readonly and hidden fields are refused naming the field', async () => {
    await fresh();
    expect((await call('anonymous', 'POST', '/api/streams/posts/entries', { id: 10, title: 'x', author_id: 'x' })).status).toBe(401);
    expect((await call('reader', 'POST', '/api/streams/posts/entries', { id: 10, title: 'x', author_id: 'x' })).status).toBe(403);
    const foreign = await call('alice', 'POST', '/api/streams/posts/entries', { id: 10, title: 'x', status: 'draft', author_id: 'bob' });
    expect(foreign.status).toBe(403);
    const readonly = await call('alice', 'POST', '/api/streams/posts/entries', { id: 10, title: 'x', status: 'draft', author_id: 'alice', views: 99 });
    expect(readonly.status).toBe(403);
    expect(readonly.json.errors[0]).toMatchObject({ message: 'The views field cannot be written.', meta: { field: 'views', rule: 'readonly' } });
    const own = await call('alice', 'POST', '/api/streams/posts/entries', { id: 10, title: 'mine', status: 'draft', author_id: 'alice' });
    expect(own.status).toBe(201);
    expect((await call('bob', 'GET', '/api/streams/posts/entries/10')).status).toBe(404);
    expect((await call('alice', 'GET', '/api/streams/posts/entries/10')).status).toBe(200);
  });

  it('update: outside the rule is a 404; a change leaving the rule is a 403; nothing changes', async () => {
    await fresh();
    expect((await call('alice', 'PATCH', '/api/streams/posts/entries/3', { title: 'stolen' })).status).toBe(404);
    expect((await call('alice', 'PUT', '/api/streams/posts/entries/4', { title: 'stolen', author_id: 'alice' })).status).toBe(404);
    expect((await call('alice', 'PATCH', '/api/streams/posts/entries/2', { author_id: 'bob' })).status).toBe(403);
    expect((await call('alice', 'PATCH', '/api/streams/posts/entries/2', { views: 1 })).status).toBe(403);
    expect((await call('anonymous', 'PATCH', '/api/streams/posts/entries/1', { title: 'x' })).status).toBe(401);
    const ok = await call('alice', 'PATCH', '/api/streams/posts/entries/2', { title: 'Renamed' });
    expect(ok.status).toBe(200);
    expect(ok.json.data.title).toBe('Renamed');
    // PUT keeps what the caller may not write (views is read-only to authors).
    const put = await call('alice', 'PUT', '/api/streams/posts/entries/1', { title: 'Hello again', status: 'published', author_id: 'alice', writer: 1 });
    expect(put.status).toBe(200);
    const stored = await call('boss', 'GET', '/api/streams/posts/entries/1');
    expect(stored.json.data).toMatchObject({ title: 'Hello again', views: 10 });
    expect((await call('boss', 'GET', '/api/streams/posts/entries/3')).json.data.title).toBe('Bob speaks');
  });

  it('delete: only inside the delete rule (404 outside), admins anywhere', async () => {
    await fresh();
    expect((await call('alice', 'DELETE', '/api/streams/posts/entries/1')).status).toBe(404); // published
    expect((await call('alice', 'DELETE', '/api/streams/posts/entries/4')).status).toBe(404); // bob's
    expect((await call('anonymous', 'DELETE', '/api/streams/posts/entries/2')).status).toBe(401);
    expect((await call('alice', 'DELETE', '/api/streams/posts/entries/2')).status).toBe(204);
    expect((await call('boss', 'DELETE', '/api/streams/posts/entries/3')).status).toBe(204);
    expect(ids(await call('boss', 'GET', '/api/streams/posts/entries'))).toEqual([1, 4]);
  });
}

const SOURCES: SourceName[] = ['filebase', 'file', 'self'];
for (const transport of TRANSPORTS) {
  for (const source of SOURCES) {
    describe.skipIf(!transport.available)(`access matrix: ${source} source on ${transport.name}`, () => {
      let s: AccessApp;
      const start = async () => {
        await s?.app.close();
        s = await startAccessApp({ source, transport: transport.name });
      };
      beforeAll(start);
      afterAll(async () => s?.app.close());
      readMatrix(() => s);
      // Writes on one transport only: the transports share the endpoints, the sources differ.
      if (transport.name === 'node') writeMatrix(() => s, start);
    });
  }
}

describe(`access matrix: database source ${ON_STAND_IN}`, () => {
  let s: AccessApp;
  const start = async () => {
    await s?.app.close();
    const server = new StandInServer();
    const posts = { name: 'Posts', config: { source: { type: 'database' } }, fields: POSTS_FIELDS, access: POSTS_ACCESS };
    s = await startAccessApp({ extra: { streams: { posts }, config: nodeConfig(), plugins: [standInPlugin(server)] } });
    for (const post of POSTS) expect((await s.app.request('POST', '/api/streams/posts/entries', post, bearer(s.tokens.boss))).status).toBe(201);
  };
  beforeAll(start);
  afterAll(async () => s?.app.close());
  readMatrix(() => s);
  writeMatrix(() => s, start);
});

export type { TestApp };
