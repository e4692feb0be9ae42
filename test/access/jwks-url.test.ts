/**
 * Issue #28: keys from a JWKS URL are fetched once and kept; an unknown `kid` refetches at
 * most once a minute, so a flood of tokens with invented key ids never floods the issuer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from './fixture.js';

let server: Server;
let app: TestApp;
let fetches = 0;
let served: object[] = [];
const keys: Record<string, Awaited<ReturnType<typeof generateKeyPair>>> = {};

const token = (kid: string) =>
  new SignJWT({ sub: 'u1', roles: ['reader'] }).setProtectedHeader({ alg: 'ES256', kid }).setAudience('jwks-url').setExpirationTime('1h').sign(keys[kid]!.privateKey);

beforeAll(async () => {
  for (const kid of ['k1', 'k2']) keys[kid] = await generateKeyPair('ES256', { extractable: true });
  served = [{ ...(await exportJWK(keys.k1!.publicKey)), kid: 'k1', alg: 'ES256' }];
  server = createServer((_req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: served }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  app = await startApp({
    streams: { notes: { fields: { id: 'integer', text: 'string' }, access: { reader: { list: true, view: true } } } },
    data: { notes: [{ id: 1, text: 'hi' }] },
    config: { access: { jwks_url: url, algorithms: ['ES256'], audience: 'jwks-url' } },
  });
});
afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => server?.close(resolve));
});

it('fetches the key set once, keeps it, and refetches an unknown kid at most once a minute', async () => {
  const first = await token('k1');
  expect((await app.request('GET', '/api/streams/notes/entries/1', undefined, bearer(first))).status).toBe(200);
  expect(fetches).toBe(1);
  // Another k1 token: verified with the kept set, no fetch.
  const second = await new SignJWT({ sub: 'u2', roles: ['reader'] }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setAudience('jwks-url').setExpirationTime('1h').sign(keys.k1!.privateKey);
  expect((await app.request('GET', '/api/streams/notes/entries', undefined, bearer(second))).status).toBe(200);
  expect(fetches).toBe(1);
  // The issuer rotates to k2; within the cooldown, tokens of unknown kids fetch nothing more.
  served = [...served, { ...(await exportJWK(keys.k2!.publicKey)), kid: 'k2', alg: 'ES256' }];
  for (let i = 0; i < 5; i++) {
    const res = await app.request('GET', '/api/streams/notes/entries', undefined, bearer(await token('k2')));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('No key here verifies the token');
  }
  expect(fetches).toBe(1);
});
