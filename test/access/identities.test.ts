/**
 * Issue #28 item 1: who calls. JWTs (JWKS and HS secret) with issuer, audience, expiry and an
 * algorithm allow-list; API keys by digest; the anonymous role; `api.auth` tokens as admins.
 * A bad credential is a 401 with `WWW-Authenticate` that never echoes it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { API } from '../../plugins/api/index.js';
import { eventually } from '../helpers/eventually.js';
import { REPO } from '../helpers/server-process.js';
import { bearer, hsToken, LEGACY_TOKEN, noneToken, PARTNER_KEY, rsToken, startAccessApp, type AccessApp } from './fixture.js';

/** An endpoint that shows `request.locals.user`, as middleware, hooks and addons read it. */
const whoami = definePlugin({
  name: 'whoami',
  requires: ['api'],
  register({ use }) {
    use(API).addEndpoint({
      name: 'test.whoami',
      method: 'GET',
      pattern: '/whoami',
      openapi: { summary: 'The caller', responses: { '200': { description: 'request.locals.user', content: { 'application/json': { schema: { type: 'object' } } } } } },
      handler: async (request) => ({ status: 200, body: JSON.stringify({ data: request.locals.user ?? null }) }),
    });
  },
});

let s: AccessApp;
beforeAll(async () => {
  s = await startAccessApp({ extra: { plugins: [whoami] } });
});
afterAll(async () => s?.app.close());

const who = async (headers?: Record<string, string>) => (await s.app.request('GET', '/api/whoami', undefined, headers)).json?.data;

describe('identities', () => {
  it('request.locals.user holds { id, roles, claims } of each kind of caller', async () => {
    expect(await who()).toEqual({ id: null, roles: ['public'], claims: {} });
    expect(await who(bearer(s.tokens.alice))).toMatchObject({ id: 'alice', roles: ['author'], claims: { sub: 'alice', aud: 'streams-tests' } });
    // A roles claim given as a string is a list of one.
    expect(await who(bearer(s.tokens.bob))).toMatchObject({ id: 'bob', roles: ['author'] });
    expect(await who(bearer(PARTNER_KEY))).toEqual({ id: 'partner', roles: ['author'], claims: {} });
    expect(await who(bearer(LEGACY_TOKEN))).toMatchObject({ roles: ['admin'] });
  });

  const refused = async (token: string, description: RegExp) => {
    const res = await s.app.request('GET', '/api/streams/posts/entries', undefined, bearer(token));
    expect(res.status).toBe(401);
    const challenge = res.headers['www-authenticate'];
    expect(challenge).toMatch(/^Bearer realm="streams", error="invalid_token", error_description="/);
    expect(challenge).toMatch(description);
    // Never echoed: not in the body, not in a header.
    expect(res.text).not.toContain(token);
    expect(JSON.stringify(res.headers)).not.toContain(token.slice(0, 40));
    return res;
  };

  it('bad tokens get 401 with a reason and without echo: expired, wrong audience, wrong issuer, alg none, key confusion, forged, unknown keys', async () => {
    await refused(await rsToken(s.keys, { sub: 'alice', roles: ['admin'] }, { exp: Math.floor(Date.now() / 1000) - 3600 }), /expired/);
    await refused(await rsToken(s.keys, { sub: 'alice', roles: ['admin'] }, { aud: 'someone-else' }), /aud claim/);
    await refused(await rsToken(s.keys, { sub: 'alice', roles: ['admin'] }, { iss: 'https://evil.test' }), /iss claim/);
    await refused(noneToken({ sub: 'mallory', roles: ['admin'] }), /algorithm not accepted|invalid/);
    // Key confusion: an HS256 token whose "secret" is the RSA public key everyone can read.
    await refused(await hsToken({ sub: 'mallory', roles: ['admin'] }, s.keys.publicPem), /signature does not verify/);
    await refused(await hsToken({ sub: 'mallory', roles: ['admin'] }, 'another secret of at least thirty-two bytes!!'), /signature does not verify/);
    const [head, , sig] = s.tokens.alice.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ sub: 'alice', roles: ['admin'], iss: 'https://issuer.test', aud: 'streams-tests', exp: 9999999999 })).toString('base64url')}.${sig}`;
    await refused(forged, /signature does not verify/);
    await refused('not-a-known-api-key-0000', /API key is not known/);
    const malformed = await s.app.request('GET', '/api/streams/posts/entries', undefined, { authorization: 'Basic YWxpY2U6c2VjcmV0' });
    expect(malformed.status).toBe(401);
    expect(malformed.headers['www-authenticate']).toContain('error="invalid_request"');
  });

  it('the clock skew is honoured both ways, and a kept token stops working when it expires', async () => {
    const now = Math.floor(Date.now() / 1000);
    // Within the default 30 s of skew: accepted; past it: refused.
    expect((await s.app.request('GET', '/api/streams/posts/entries', undefined, bearer(await rsToken(s.keys, { sub: 'alice', roles: ['author'] }, { exp: now - 20 })))).status).toBe(200);
    expect((await s.app.request('GET', '/api/streams/posts/entries', undefined, bearer(await rsToken(s.keys, { sub: 'alice', roles: ['author'] }, { exp: now - 40 })))).status).toBe(401);
    const strict = await startAccessApp({ access: { clock_skew_seconds: 0 } });
    try {
      const soon = await rsToken(strict.keys, { sub: 'alice', roles: ['author'] }, { exp: Math.floor(Date.now() / 1000) + 2 });
      expect((await strict.app.request('GET', '/api/streams/posts/entries', undefined, bearer(soon))).status).toBe(200);
      expect((await strict.app.request('GET', '/api/streams/posts/entries', undefined, bearer(soon))).status).toBe(200);
      await eventually(async () => expect((await strict.app.request('GET', '/api/streams/posts/entries', undefined, bearer(soon))).status).toBe(401), 5000);
    } finally {
      await strict.app.close();
    }
  });

  it('answers vary by caller: Vary: Authorization on every answer', async () => {
    const res = await s.app.request('GET', '/api/streams/posts/entries/1');
    expect(res.headers.vary).toContain('Authorization');
  });
});

describe('caches never serve one caller\'s answer to another', () => {
  it('the same URL, user A then user B: each gets its own rows and fields (list, show, query)', async () => {
    for (let round = 0; round < 2; round++) {
      const alice = await s.app.request('GET', '/api/streams/posts/entries?per_page=10', undefined, bearer(s.tokens.alice));
      const bob = await s.app.request('GET', '/api/streams/posts/entries?per_page=10', undefined, bearer(s.tokens.bob));
      const anonymous = await s.app.request('GET', '/api/streams/posts/entries?per_page=10');
      expect(alice.json.data.map((p: { id: number }) => p.id)).toEqual([1, 2, 3]);
      expect(bob.json.data.map((p: { id: number }) => p.id)).toEqual([1, 3, 4]);
      expect(anonymous.json.data.map((p: { id: number }) => p.id)).toEqual([1, 3]);
      expect(alice.headers.etag).not.toBe(bob.headers.etag);
    }
    const admin = await s.app.request('GET', '/api/streams/posts/entries/1', undefined, bearer(s.tokens.boss));
    const anonymous = await s.app.request('GET', '/api/streams/posts/entries/1');
    const again = await s.app.request('GET', '/api/streams/posts/entries/1', undefined, bearer(s.tokens.boss));
    expect(admin.json.data.notes).toBe('n1');
    expect('notes' in anonymous.json.data).toBe(false);
    expect(again.json.data.notes).toBe('n1');
    // Another body, another tag: the admin's tag never gets the anonymous caller a 304.
    expect(anonymous.headers.etag).not.toBe(admin.headers.etag);
    expect((await s.app.request('GET', '/api/streams/posts/entries/1', undefined, { 'if-none-match': admin.headers.etag! })).status).toBe(200);
    expect((await s.app.request('GET', '/api/streams/posts/entries/1', undefined, { 'if-none-match': anonymous.headers.etag! })).status).toBe(304);
    // Bob's draft: 404 to alice before and after bob read it.
    expect((await s.app.request('GET', '/api/streams/posts/entries/4', undefined, bearer(s.tokens.bob))).status).toBe(200);
    expect((await s.app.request('GET', '/api/streams/posts/entries/4', undefined, bearer(s.tokens.alice))).status).toBe(404);
  });

  it('a tag read with hidden fields is still good for If-Match', async () => {
    const read = await s.app.request('GET', '/api/streams/posts/entries/2', undefined, bearer(s.tokens.alice));
    const write = await s.app.request('PATCH', '/api/streams/posts/entries/2', { title: 'Draft, edited' }, { ...bearer(s.tokens.alice), 'if-match': read.headers.etag! });
    expect(write.status).toBe(200);
    const stale = await s.app.request('PATCH', '/api/streams/posts/entries/2', { title: 'again' }, { ...bearer(s.tokens.alice), 'if-match': read.headers.etag! });
    expect(stale.status).toBe(412);
  });
});

describe('definitions', () => {
  it('only admin roles create, change or delete them (401 anonymous, 403 others)', async () => {
    const body = { id: 'notes', fields: { id: 'integer' } };
    expect((await s.app.request('POST', '/api/streams', body)).status).toBe(401);
    expect((await s.app.request('POST', '/api/streams', body, bearer(s.tokens.alice))).status).toBe(403);
    expect((await s.app.request('PATCH', '/api/streams/posts', { name: 'Mine' }, bearer(PARTNER_KEY))).status).toBe(403);
    expect((await s.app.request('PUT', '/api/streams/posts', { fields: { id: 'integer' } }, bearer(s.tokens.bob))).status).toBe(403);
    expect((await s.app.request('DELETE', '/api/streams/posts', undefined, bearer(s.tokens.alice))).status).toBe(403);
    expect((await s.app.request('POST', '/api/streams', body, bearer(s.tokens.boss))).status).toBe(201);
    expect((await s.app.request('DELETE', '/api/streams/notes', undefined, bearer(LEGACY_TOKEN))).status).toBe(204);
  });

  it('GET /api/streams lists only what the caller may list, without hidden fields or the access key', async () => {
    const anonymous = await s.app.request('GET', '/api/streams');
    expect(anonymous.json.data.map((d: { id: string }) => d.id).sort()).toEqual(['posts', 'users']);
    const posts = anonymous.json.data.find((d: { id: string }) => d.id === 'posts');
    expect(posts.access).toBeUndefined();
    expect(Object.keys(posts.fields)).not.toContain('notes');
    expect((await s.app.request('GET', '/api/streams/audit')).status).toBe(404);
    expect((await s.app.request('GET', '/api/streams/posts')).json.data.access).toBeUndefined();
    const admin = await s.app.request('GET', '/api/streams', undefined, bearer(s.tokens.boss));
    expect(admin.json.data.map((d: { id: string }) => d.id).sort()).toEqual(['audit', 'posts', 'users']);
    expect(admin.json.data.find((d: { id: string }) => d.id === 'posts').access).toBeDefined();
  });
});

describe('the OpenAPI document per caller', () => {
  const doc = async (headers?: Record<string, string>) => (await s.app.request('GET', '/api/openapi.json', undefined, headers)).json;

  it('shows the security schemes and only what the caller may do', async () => {
    const anonymous = await doc();
    expect(Object.keys(anonymous.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    expect(anonymous.security).toContainEqual({});
    expect(Object.keys(anonymous.paths['/api/streams/posts/entries'])).toEqual(['get']);
    expect(anonymous.paths['/api/streams/audit/entries']).toBeUndefined();
    expect(anonymous.paths['/api/streams'].post).toBeUndefined();
    expect(Object.keys(anonymous.components.schemas['posts.Entry'].properties)).not.toContain('notes');
    const alice = await doc(bearer(s.tokens.alice));
    expect(Object.keys(alice.paths['/api/streams/posts/entries']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(alice.paths['/api/streams/posts/entries/{key}']).sort()).toEqual(['delete', 'get', 'patch', 'put']);
    expect(alice.paths['/api/streams'].post).toBeUndefined();
    const admin = await doc(bearer(s.tokens.boss));
    expect(admin.paths['/api/streams/audit/entries']).toBeDefined();
    expect(admin.paths['/api/streams'].post).toBeDefined();
    expect(Object.keys(admin.components.schemas['posts.Entry'].properties)).toContain('notes');
  });

  it('npm run types --token generates a client for one role', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'types-access-'));
    try {
      const out = path.join(dir, 'api.ts');
      await promisify(execFile)(process.execPath, [path.join(REPO, 'dist/plugins/openapi/types-command.js'), '--url', s.app.url, '--out', out, '--token', s.tokens.alice]);
      const types = await readFile(out, 'utf8');
      expect(types).toContain('"/api/streams/posts/entries"');
      expect(types).not.toContain('"/api/streams/audit/entries"');
      await promisify(execFile)(process.execPath, [path.join(REPO, 'dist/plugins/openapi/types-command.js'), '--url', s.app.url, '--out', out]);
      expect(await readFile(out, 'utf8')).not.toMatch(/"posts\.Input"[\s\S]*notes/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
