/**
 * The access suites' application (issue #28): a JWKS file (RS256), an HS256 secret, API keys,
 * an `api.auth` token, and three roles: `public` (the anonymous role) reads published posts
 * without their notes, `author` edits its own posts, `admin` passes every rule.
 */
import { createHash } from 'node:crypto';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { startApp, type StartAppOptions, type TestApp } from '../helpers/app.js';

export const SECRET_ENV = 'ACCESS_TEST_HS_SECRET';
export const SECRET = 'an HMAC secret of more than thirty-two bytes, for tests only';
export const PARTNER_KEY = 'partner-api-key-0123456789';
export const LEGACY_TOKEN = 'legacy-admin-token-0123';
export const AUDIENCE = 'streams-tests';
export const ISSUER = 'https://issuer.test';

export interface Keys {
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  publicPem: string;
  jwks: { keys: object[] };
}

export async function makeKeys(): Promise<Keys> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  return { privateKey, publicPem: await exportSPKI(publicKey), jwks: { keys: [jwk] } };
}

/** An RS256 token of the JWKS key (defaults: valid for an hour, our issuer and audience). */
export async function rsToken(keys: Keys, claims: JWTPayload, options: { exp?: number | string; aud?: string; iss?: string } = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuedAt()
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setExpirationTime(options.exp ?? '1h')
    .sign(keys.privateKey);
}

/** An HS256 token of the configured secret (or of any other key: key confusion). */
export async function hsToken(claims: JWTPayload, key: string | Uint8Array = SECRET): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime('1h')
    .sign(typeof key === 'string' ? new TextEncoder().encode(key) : key);
}

/** An unsigned token (`alg: none`), which must never be an identity. */
export function noneToken(claims: JWTPayload): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ ...claims, iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

export const POSTS_ACCESS = {
  public: {
    list: [['status', '=', 'published']],
    view: [['status', '=', 'published']],
    fields: { hidden: ['notes'] },
  },
  author: {
    list: [{ any: [['status', '=', 'published'], ['author_id', '=', '@user.id']] }],
    view: [{ any: [['status', '=', 'published'], ['author_id', '=', '@user.id']] }],
    create: [['author_id', '=', '@user.id']],
    update: [['author_id', '=', '@user.id']],
    delete: [['author_id', '=', '@user.id'], ['status', '=', 'draft']],
    fields: { readonly: ['views'] },
  },
};

export const POSTS_FIELDS = {
  id: 'integer',
  title: 'string',
  status: 'string',
  author_id: 'string',
  notes: 'string',
  views: 'integer',
  writer: { type: 'relationship', config: { related: 'users' } },
};

export const POSTS = [
  { id: 1, title: 'Hello', status: 'published', author_id: 'alice', notes: 'n1', views: 10, writer: 1 },
  { id: 2, title: 'Draft of alice', status: 'draft', author_id: 'alice', notes: 'n2', views: 0, writer: 1 },
  { id: 3, title: 'Bob speaks', status: 'published', author_id: 'bob', notes: 'n3', views: 5, writer: 2 },
  { id: 4, title: 'Draft of bob', status: 'draft', author_id: 'bob', notes: 'n4', views: 0, writer: 2 },
];

export const USERS = [
  { id: 1, name: 'Alice', email: 'alice@example.test', visible: true },
  { id: 2, name: 'Bob', email: 'bob@example.test', visible: false },
];

export type SourceName = 'filebase' | 'file' | 'self';

/** The posts definition on one source (its entries where that source keeps them). */
export function postsOn(source: SourceName): { definition: Record<string, unknown>; files: Record<string, string | object>; data: Record<string, Array<Record<string, unknown>>> } {
  const base = { name: 'Posts', fields: POSTS_FIELDS, access: POSTS_ACCESS };
  if (source === 'file') return { definition: { ...base, config: { source: { type: 'file', format: 'json', file: 'streams/data/posts.json' } } }, files: { 'streams/data/posts.json': POSTS }, data: {} };
  if (source === 'self') return { definition: { ...base, config: { source: { type: 'self' } }, data: POSTS }, files: {}, data: {} };
  return { definition: base, files: {}, data: { posts: POSTS } };
}

export interface AccessApp {
  app: TestApp;
  keys: Keys;
  /** Tokens by caller: alice (RS256, author), bob (HS256, author), boss (RS256, admin). */
  tokens: { alice: string; bob: string; boss: string };
}

/** The access config of the suites: JWKS file, HS secret, API keys (one by digest, one from the environment), three roles. */
export function accessConfig(): Record<string, unknown> {
  process.env[SECRET_ENV] = SECRET;
  process.env.ACCESS_TEST_PARTNER_DIGEST = createHash('sha256').update(PARTNER_KEY).digest('hex');
  return {
    api: { auth: { tokens: [LEGACY_TOKEN] } },
    access: {
      jwks_file: 'jwks.json',
      secret_env: SECRET_ENV,
      algorithms: ['RS256', 'HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: [
        { id: 'partner', sha256_env: 'ACCESS_TEST_PARTNER_DIGEST', roles: ['author'] },
        { id: 'reader', sha256: createHash('sha256').update('reader-api-key-0123456789').digest('hex'), roles: ['public'] },
      ],
    },
  };
}

export async function startAccessApp(options: { source?: SourceName; extra?: StartAppOptions; transport?: 'node' | 'uws'; access?: Record<string, unknown> } = {}): Promise<AccessApp> {
  const keys = await makeKeys();
  const posts = postsOn(options.source ?? 'filebase');
  const config = accessConfig();
  Object.assign(config.access as object, options.access ?? {});
  if (options.transport) (config as Record<string, unknown>).http = { transport: options.transport };
  const app = await startApp({
    streams: {
      posts: posts.definition,
      users: {
        name: 'Users',
        fields: { id: 'integer', name: 'string', email: 'string', visible: 'boolean' },
        access: { public: { list: [['visible', '=', true]], view: [['visible', '=', true]], fields: { hidden: ['email'] } }, author: { list: true, view: true } },
      },
      audit: { name: 'Audit', fields: { id: 'integer', what: 'string' } },
      ...(options.extra?.streams ?? {}),
    },
    data: { users: USERS, audit: [{ id: 1, what: 'boot' }], ...posts.data },
    files: { 'jwks.json': keys.jwks, ...posts.files },
    config: { ...config, ...(options.extra?.config ?? {}) },
    plugins: options.extra?.plugins,
  });
  const tokens = {
    alice: await rsToken(keys, { sub: 'alice', roles: ['author'] }),
    bob: await hsToken({ sub: 'bob', roles: 'author' }),
    boss: await rsToken(keys, { sub: 'boss', roles: ['admin'] }),
  };
  return { app, keys, tokens };
}

export const ids = (res: { json: { data: Array<{ id: number }> } }): number[] => res.json.data.map((e) => e.id).sort((a, b) => a - b);
