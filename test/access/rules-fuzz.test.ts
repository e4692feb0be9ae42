/**
 * Issue #28: a rule set with a mistake (a bad operator, an unknown field, an `@user` typo, an
 * unknown action...) is never served: a 409 naming the JSON path on the stream endpoints,
 * a boot error naming the file and the path when it is on disk or in the config.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp } from '../helpers/app.js';
import { accessConfig, bearer, startAccessApp, type AccessApp } from './fixture.js';

let s: AccessApp;
beforeAll(async () => {
  s = await startAccessApp();
});
afterAll(async () => s?.app.close());

const FIELDS = { id: 'integer', title: 'string', owner: 'string' };
const CASES: Array<[string, unknown, string, RegExp]> = [
  ['a bad operator', { public: { list: [['title', '=~', 'x']] } }, '/access/public/list/0/1', /unknown operator/],
  ['an operator object ($ne)', { public: { list: [['title', { $ne: 1 }, 'x']] } }, '/access/public/list/0/1', /unknown operator/],
  ['an unknown field', { public: { list: [['titel', '=', 'x']] } }, '/access/public/list/0/0', /unknown field "titel"/],
  ['an @user typo', { author: { update: [['owner', '=', '@usr.id']] } }, '/access/author/update/0/2', /unknown reference "@usr.id"/],
  ['an @user.claims typo', { author: { update: [['owner', '=', '@user.claim.org']] } }, '/access/author/update/0/2', /unknown reference/],
  ['an unknown action', { public: { read: true } }, '/access/public/read', /unknown action "read"/],
  ['a rule that is not a list', { public: { list: 'yes' } }, '/access/public/list', /must be true, false or a list/],
  ['a condition that is not a triple', { public: { list: [['title']] } }, '/access/public/list/0', /must be \[field, operator, value\]/],
  ['a malformed any', { public: { view: [{ any: [] }] } }, '/access/public/view/0', /"any"/],
  ['a bad condition inside any', { public: { view: [{ any: [['title', 'LIKE', 'a%'], ['nope', '=', 1]] }] } }, '/access/public/view/0/any/1/0', /unknown field "nope"/],
  ['BETWEEN with one value', { public: { list: [['id', 'BETWEEN', [1]]] } }, '/access/public/list/0/2', /exactly two values/],
  ['IN without a list', { public: { list: [['id', 'IN', 3]] } }, '/access/public/list/0/2', /takes a list/],
  ['an object as a value', { public: { list: [['title', '=', { $gt: '' }]] } }, '/access/public/list/0/2', /must be a string, number, boolean or null/],
  ['an unknown hidden field', { public: { list: true, fields: { hidden: ['secret'] } } }, '/access/public/fields/hidden/0', /unknown field "secret"/],
  ['the key field hidden', { public: { list: true, fields: { hidden: ['id'] } } }, '/access/public/fields/hidden/0', /key field "id" cannot be hidden/],
  ['an unknown fields key', { public: { list: true, fields: { visible: ['title'] } } }, '/access/public/fields/visible', /unknown key "visible"/],
  ['a bad role name', { 'pub lic': { list: true } }, '/access/pub lic', /not a role name/],
  ['a role that is not an object', { public: true }, '/access/public', /must be an object/],
  ['an access key that is not an object', ['public'], '/access', /object/],
];

describe('rule definitions are checked: 409 naming the path on the stream endpoints', () => {
  it.each(CASES)('%s', async (_name, access, path, message) => {
    const res = await s.app.request('POST', '/api/streams', { id: 'fuzz', fields: FIELDS, access }, bearer(s.tokens.boss));
    expect(res.status).toBe(409);
    const errors = res.json.errors as Array<{ message: string; meta?: Record<string, unknown> }>;
    expect(errors.some((e) => JSON.stringify(e).includes(path) && message.test(e.message))).toBe(true);
    expect((await s.app.request('GET', '/api/streams/fuzz', undefined, bearer(s.tokens.boss))).status).toBe(404);
  });

  it('random mutations of a good rule set are either accepted or refused with a path, never a 500', async () => {
    const good = { public: { list: [['title', 'LIKE', 'a%']], view: [{ any: [['id', 'IN', [1, 2]], ['owner', '=', '@user.id']] }], fields: { hidden: ['owner'] } } };
    const junk: unknown[] = [null, 1, 'x', '@', '@user', '@user.claims.', [], {}, [[]], ['id'], { any: null }, true, false, '@now', '@@user.id', '__proto__'];
    let seed = 28;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let round = 0; round < 40; round++) {
      const copy = structuredClone(good) as Record<string, unknown>;
      // Replace one random leaf (or node) with junk.
      const paths: Array<[Record<string, unknown> | unknown[], string | number]> = [];
      const walk = (node: unknown) => {
        if (node === null || typeof node !== 'object') return;
        for (const key of Object.keys(node)) {
          paths.push([node as Record<string, unknown>, Array.isArray(node) ? Number(key) : key]);
          walk((node as Record<string, unknown>)[key]);
        }
      };
      walk(copy);
      const [parent, key] = paths[random(paths.length)]!;
      (parent as Record<string | number, unknown>)[key] = junk[random(junk.length)];
      const res = await s.app.request('PUT', `/api/streams/fuzz${round}`, { fields: FIELDS, access: copy }, bearer(s.tokens.boss));
      expect([200, 201, 409]).toContain(res.status);
      if (res.status === 409) for (const e of res.json.errors) expect(JSON.stringify(e)).toContain('/access');
    }
  });
});

describe('rule mistakes on disk or in the config fail the boot naming the file and path', () => {
  it('a definition file with an @user typo', async () => {
    await expect(
      startApp({ streams: { posts: { fields: FIELDS, access: { author: { update: [['owner', '=', '@user.idd']] } } } }, config: accessConfigWithoutKeys() }),
    ).rejects.toThrow(/posts\.json[\s\S]*\/access\/author\/update\/0\/2[\s\S]*unknown reference/);
  });

  it('an access.default with a bad operator', async () => {
    await expect(startApp({ streams: { posts: { fields: FIELDS } }, config: { ...accessConfigWithoutKeys(), access: { default: { public: { list: [['id', 'is', 1]] } } } } })).rejects.toThrow(
      /unknown operator[\s\S]*\/access\/default\/public\/list\/0\/1|\/access\/default\/public\/list\/0\/1[\s\S]*unknown operator/,
    );
  });

  it('a missing or bad HS secret, or a JWKS with a private key, is a boot error', async () => {
    await expect(startApp({ config: { access: { secret_env: 'ACCESS_TEST_UNSET_SECRET' } } })).rejects.toThrow(/ACCESS_TEST_UNSET_SECRET/);
    await expect(startApp({ config: { access: { algorithms: ['none'] } } })).rejects.toThrow(/algorithms/);
    await expect(startApp({ config: { access: { jwks_file: 'keys.json' } }, files: { 'keys.json': { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } } })).rejects.toThrow(/not a public key/);
  });
});

function accessConfigWithoutKeys(): Record<string, unknown> {
  const config = accessConfig();
  return { access: { ...(config.access as Record<string, unknown>), jwks_file: undefined, keys: [] } };
}

describe('access.default', () => {
  it('gives streams without rules its rule set, and leaves a stream it does not fit to administrators', async () => {
    const app = await startApp({
      streams: { books: { fields: { id: 'integer', title: 'string' } }, logs: { fields: { id: 'integer', line: 'string' } } },
      data: { books: [{ id: 1, title: 'abc' }, { id: 2, title: 'xyz' }], logs: [{ id: 1, line: 'x' }] },
      config: { access: { default: { public: { list: [['title', 'LIKE', 'a%']], view: true } } } },
    });
    try {
      const books = await app.request('GET', '/api/streams/books/entries');
      expect(books.status).toBe(200);
      expect(books.json.data.map((b: { id: number }) => b.id)).toEqual([1]);
      expect((await app.request('GET', '/api/streams/books/entries/2')).status).toBe(200);
      expect((await app.request('GET', '/api/streams/logs/entries')).status).toBe(401);
    } finally {
      await app.close();
    }
  });
});
