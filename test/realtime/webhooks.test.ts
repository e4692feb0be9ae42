import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, Kernel } from '../../kernel/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { REALTIME } from '../../plugins/realtime/index.js';
import { MAX_IN_FLIGHT_PER_ENDPOINT } from '../../plugins/realtime/webhooks.js';
import { cleanups, runCleanups, until, webhookReceiver as receiver } from './clients.js';
import { eventually } from '../helpers/eventually.js';
import { boot, films } from './films-app.js';

/**
 * Issue #19 item 5: webhooks from the change feed, delivered with undici to a receiver on
 * 127.0.0.1: signed, retried with backoff (non-2xx and timeouts), a durable outbox, failing
 * endpoints in /readyz, writes never waiting for a delivery, a few deliveries at a time per
 * endpoint; and the signature check printed in docs/realtime.md, run as written.
 */
afterEach(runCleanups);

describe('webhooks', () => {
  it('a webhook that fails twice, then accepts, gets exactly one signed delivery id, retried', async () => {
    const hook = await receiver((n, res) => {
      res.statusCode = n <= 2 ? 503 : 200;
      res.end();
    });
    const app = await boot('node', {
      realtime: { webhooks: [{ url: hook.url, streams: ['films'], events: ['created'], secret: 'shh' }], webhook_retry_base_ms: 50 },
    });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'Aliens', secret: 'hidden' });
    await app.request('PATCH', '/api/streams/films/entries/2', { title: 'not a created event' });
    await until(() => hook.received.length === 3, 5000);
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.received).toHaveLength(3);
    expect(new Set(hook.received.map((r) => r.id)).size).toBe(1);
    const { signature, body } = hook.received[2]!;
    const format = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
    expect(format).not.toBeNull();
    expect(Math.abs(Number(format![1]) - Date.now() / 1000)).toBeLessThan(10);
    // The signature covers the timestamp, the delivery id and the body.
    expect(format![2]).toBe(createHmac('sha256', 'shh').update(`${format![1]}.${hook.received[2]!.id}.${body}`).digest('hex'));
    expect(JSON.parse(body)).toEqual({ event: 'created', cursor: expect.stringMatching(/-/), stream: 'films', id: 2, data: { id: 2, title: 'Aliens' } });
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json.details?.webhooks).toBeUndefined();
  });

  it('a receiver that does not answer in webhook_timeout_ms is retried with the same delivery id', async () => {
    const hook = await receiver((n, res) => {
      if (n === 1) return; // holds the first request: a timeout
      res.end();
    });
    const app = await boot('node', { realtime: { webhooks: [{ url: hook.url }], webhook_timeout_ms: 200, webhook_retry_base_ms: 50 } });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await until(() => hook.received.length === 2, 5000);
    expect(hook.received[0]!.id).toBe(hook.received[1]!.id);
    expect(hook.received[1]!.signature).toBe('undefined'); // no secret, no signature
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.received).toHaveLength(2);
  });

  it('a backlog goes out at most a few deliveries at a time per endpoint, every one delivered once', async () => {
    let open = 0;
    let most = 0;
    const hook = await receiver((_n, res) => {
      most = Math.max(most, ++open);
      setTimeout(() => {
        open--;
        res.end();
      }, 50);
    });
    const app = await boot('node', { realtime: { webhooks: [{ url: hook.url }] } });
    await Promise.all(Array.from({ length: 40 }, (_, i) => app.request('POST', '/api/streams/films/entries', { id: 100 + i, title: String(i) })));
    await until(() => hook.received.length === 40, 10000);
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.received).toHaveLength(40);
    expect(new Set(hook.received.map((r) => JSON.parse(r.body).id)).size).toBe(40);
    expect(most).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_ENDPOINT);
  }, 20000);

  it('a delivery pending at shutdown is delivered after the restart, with its delivery id', async () => {
    let accept = false;
    const hook = await receiver((_n, res) => {
      res.statusCode = accept ? 200 : 500;
      res.end();
    });
    const realtime = { webhooks: [{ url: hook.url, secret: 'k' }], webhook_retry_base_ms: 60000 };
    const app = await boot('node', { realtime });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await until(() => hook.received.length === 1);
    await app.kernel.shutdown();
    accept = true;
    const kernel = new Kernel(buildConfig({ http: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, realtime }, app.root), { plugins: [] });
    await kernel.boot();
    cleanups.push(() => kernel.shutdown());
    await until(() => hook.received.length === 2);
    expect(hook.received[1]!.id).toBe(hook.received[0]!.id);
    expect(JSON.parse(hook.received[1]!.body)).toMatchObject({ event: 'created', id: 2 });
  });

  it('a stream may declare its own webhooks in its definition, to allowed hosts, signed with a secret from the environment', async () => {
    process.env.STREAMS_WEBHOOK_FILMS = 'from-the-environment';
    cleanups.push(() => void delete process.env.STREAMS_WEBHOOK_FILMS);
    const hook = await receiver((_n, res) => res.end());
    const app = await boot('node', { realtime: { stream_webhook_hosts: ['127.0.0.1'], stream_webhook_secrets: { films: 'STREAMS_WEBHOOK_FILMS' } } }, {
      streams: {
        films: { ...films, webhooks: [{ url: hook.url, events: ['deleted'], secret_env: 'STREAMS_WEBHOOK_FILMS' }] },
        other: { fields: { id: 'integer' } },
      },
    });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await app.request('POST', '/api/streams/other/entries', { id: 1 });
    await app.request('DELETE', '/api/streams/films/entries/2');
    await until(() => hook.received.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.received).toHaveLength(1);
    const { signature, body } = hook.received[0]!;
    expect(JSON.parse(body)).toMatchObject({ event: 'deleted', stream: 'films', id: 2, data: null });
    const [t, v1] = signature.split(',').map((p) => p.split('=')[1]!);
    expect(v1).toBe(createHmac('sha256', 'from-the-environment').update(`${t}.${hook.received[0]!.id}.${body}`).digest('hex'));
    // The definition shows where the secret comes from, never the secret.
    expect(JSON.stringify((await app.request('GET', '/api/streams/films')).json)).not.toContain('from-the-environment');
    // A bad webhook in a definition is refused like any bad definition key, naming it.
    const bad = await app.request('POST', '/api/streams', { id: 'bad', fields: { id: 'integer' }, webhooks: [{ url: 'ftp://example.com', secret: 'inline' }] });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    expect(JSON.stringify(bad.json.errors)).toMatch(/webhooks/);
    // A definition can be written over the API: it may neither post to a host the operator did not
    // allow (an internal address) nor sign with any variable of the process (a database URL).
    const elsewhere = await app.request('POST', '/api/streams', { id: 'probe', fields: { id: 'integer' }, webhooks: [{ url: 'http://169.254.169.254/latest' }] });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.json.errors[0].meta.field).toBe('/webhooks/0/url');
    const leak = await app.request('POST', '/api/streams', { id: 'leak', fields: { id: 'integer' }, webhooks: [{ url: hook.url, secret_env: 'MONGODB_URL' }] });
    expect(leak.status).toBe(409);
    expect(JSON.stringify(leak.json.errors)).toMatch(/secret_env/);
    expect((await app.request('GET', '/api/streams/probe')).status).toBe(404);
  });

  it('a pending delivery of a webhook its stream no longer declares is dropped, never sent unsigned', async () => {
    process.env.STREAMS_WEBHOOK_FILMS = 'k';
    cleanups.push(() => void delete process.env.STREAMS_WEBHOOK_FILMS);
    const hook = await receiver((_n, res) => {
      res.statusCode = 503;
      res.end();
    });
    const app = await boot('node', { realtime: { stream_webhook_hosts: ['127.0.0.1'], stream_webhook_secrets: { films: 'STREAMS_WEBHOOK_FILMS' }, webhook_retry_base_ms: 100 } }, {
      streams: { films: { ...films, webhooks: [{ url: hook.url, secret_env: 'STREAMS_WEBHOOK_FILMS' }] } },
    });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await until(() => hook.received.length >= 1);
    expect(hook.received.every((r) => r.signature.startsWith('t='))).toBe(true);
    expect((await app.request('PATCH', '/api/streams/films', { webhooks: [] })).status).toBe(200);
    await eventually(async () => expect((await app.request('GET', '/readyz')).json.details?.webhooks?.pending ?? 0).toBe(0), 5000);
    const seen = hook.received.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(hook.received.length).toBe(seen);
    expect(hook.received.every((r) => r.signature.startsWith('t='))).toBe(true);
  });

  it('without stream_webhook_hosts a definition declares no webhooks (only the operator\'s config sends them)', async () => {
    const hook = await receiver((_n, res) => res.end());
    const app = await boot('node');
    const refused = await app.request('POST', '/api/streams', { id: 'mine', fields: { id: 'integer' }, webhooks: [{ url: hook.url }] });
    expect(refused.status).toBe(409);
    expect(refused.json.errors[0].message).toMatch(/not in realtime.stream_webhook_hosts \(none are allowed\)/);
  });

  it('the ten-line signature check of docs/realtime.md accepts a real delivery and refuses a forged one', async () => {
    const page = readFileSync(path.join(import.meta.dirname, '../../docs/realtime.md'), 'utf8');
    const snippet = /Checking a delivery in ten lines[^`]*```js\n([\s\S]*?)```/.exec(page)?.[1];
    expect(snippet).toBeDefined();
    expect(snippet!.trimEnd().split('\n').length).toBeLessThanOrEqual(10);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'verify-')), 'verify.mjs');
    writeFileSync(file, snippet!);
    const { verify } = (await import(pathToFileURL(file).href)) as { verify(secret: string, header: string, id: string, body: string): boolean };
    const hook = await receiver((_n, res) => res.end());
    const app = await boot('node', { realtime: { webhooks: [{ url: hook.url, secret: 'a long random string' }] } });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await until(() => hook.received.length === 1);
    const { signature, body, id } = hook.received[0]!;
    expect(verify('a long random string', signature, id, body)).toBe(true);
    expect(verify('another secret', signature, id, body)).toBe(false);
    expect(verify('a long random string', signature, id, body.replace('two', 'owt'))).toBe(false);
    // A captured delivery replayed under a new id (to get past deduplication) fails.
    expect(verify('a long random string', signature, randomUUID(), body)).toBe(false);
    // So does one replayed later than the tolerance: the timestamp is signed too.
    const [t, v1] = signature.split(',').map((p) => p.split('=')[1]!);
    const old = `t=${Number(t) - 600},v1=${v1}`;
    expect(verify('a long random string', old, id, body)).toBe(false);
    const resigned = `t=${Number(t) - 600},v1=${createHmac('sha256', 'a long random string').update(`${Number(t) - 600}.${id}.${body}`).digest('hex')}`;
    expect(verify('a long random string', resigned, id, body)).toBe(false);
  });

  it('a failing endpoint shows in /readyz details and never blocks writes; pending deliveries survive a restart', async () => {
    const app = await boot('node', { realtime: { webhooks: [{ url: 'http://127.0.0.1:9/never' }], webhook_retry_base_ms: 60000, webhook_timeout_ms: 500 } });
    const started = Date.now();
    expect((await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'x' })).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(1000);
    let details: Record<string, unknown> | undefined;
    for (const end = Date.now() + 3000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      details = (await app.request('GET', '/readyz')).json.details?.webhooks;
      if (details?.failing !== undefined) break;
    }
    expect(details).toMatchObject({ failing: [{ url: 'http://127.0.0.1:9/never', failures: 1 }], pending: 1 });
    await app.kernel.shutdown();
    const kernel = new Kernel(buildConfig({ http: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' }, realtime: { webhooks: [{ url: 'http://127.0.0.1:9/never' }], webhook_retry_base_ms: 60000 } }, app.root), { plugins: [] });
    await kernel.boot();
    cleanups.push(() => kernel.shutdown());
    // The outbox is read after the node listens (issue #33): its pending count once it is.
    expect(await kernel.get(REALTIME).history.start()).toBe(true);
    const ready = await request(`${kernel.get(HTTP_SERVER).url}/readyz`);
    expect(((await ready.body.json()) as { details: { webhooks: { pending: number } } }).details.webhooks.pending).toBe(1);
  });

  it('a delivery that keeps failing is moved to the dead letters after webhook_max_attempts, reported in /readyz, never retried forever', async () => {
    const hook = await receiver((_n, res) => {
      res.statusCode = 500;
      res.end();
    });
    const app = await boot('node', { realtime: { webhooks: [{ url: hook.url }], webhook_retry_base_ms: 20, webhook_max_attempts: 3 } });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await until(() => hook.received.length === 3, 5000);
    let webhooks: Record<string, unknown> = {};
    await eventually(async () => {
      webhooks = (await app.request('GET', '/readyz')).json.details.webhooks;
      expect(webhooks.dead_letters).toMatchObject({ count: 1 });
    }, 5000);
    expect(webhooks.pending).toBeUndefined();
    const file = path.join(app.root, 'streams/data/.realtime/dead-letters.jsonl');
    const [letter] = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(letter).toMatchObject({ id: hook.received[0]!.id, url: hook.url, attempts: 3, reason: expect.stringMatching(/answered 500/) });
    expect(JSON.parse(letter!.body as string)).toMatchObject({ event: 'created', id: 2 });
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.received).toHaveLength(3);
  });

  it('a delivery older than webhook_max_age_seconds goes to the dead letters at its next failure', async () => {
    const hook = await receiver((_n, res) => {
      res.statusCode = 503;
      res.end();
    });
    const app = await boot('node', { realtime: { webhooks: [{ url: hook.url }], webhook_retry_base_ms: 400, webhook_max_age_seconds: 1 } });
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await eventually(async () => expect((await app.request('GET', '/readyz')).json.details.webhooks.dead_letters).toMatchObject({ count: 1 }), 10000);
    expect(hook.received.length).toBeGreaterThanOrEqual(2);
  });

  it('a stream signs only with the secret the config maps to it: a definition naming another stream\'s variable is refused', async () => {
    process.env.STREAMS_WEBHOOK_FILMS = 'films-secret';
    cleanups.push(() => void delete process.env.STREAMS_WEBHOOK_FILMS);
    const hook = await receiver((_n, res) => res.end());
    const app = await boot('node', { realtime: { stream_webhook_hosts: ['127.0.0.1'], stream_webhook_secrets: { films: 'STREAMS_WEBHOOK_FILMS' } } });
    const stolen = await app.request('POST', '/api/streams', { id: 'other', fields: { id: 'integer' }, webhooks: [{ url: hook.url, secret_env: 'STREAMS_WEBHOOK_FILMS' }] });
    expect(stolen.status).toBe(409);
    expect(stolen.json.errors[0].meta.field).toBe('/webhooks/0/secret_env');
    expect(stolen.json.errors[0].message).toMatch(/maps \[other\] to no variable/);
    // Without secret_env a stream's webhook is signed with its own mapped secret, if any.
    expect((await app.request('PATCH', '/api/streams/films', { webhooks: [{ url: hook.url, events: ['created'] }] })).status).toBe(200);
    await app.request('POST', '/api/streams/films/entries', { id: 2, title: 'two' });
    await until(() => hook.received.length === 1);
    const { signature, body, id } = hook.received[0]!;
    const [t, v1] = signature.split(',').map((p) => p.split('=')[1]!);
    expect(v1).toBe(createHmac('sha256', 'films-secret').update(`${t}.${id}.${body}`).digest('hex'));
  });

  it('an outbox file of an older version (one file, pending and done deliveries) is read as a stream at boot and its pending ones delivered', async () => {
    const hook = await receiver((_n, res) => res.end());
    const app = await boot('node');
    await app.kernel.shutdown();
    const folder = path.join(app.root, 'streams/data/.realtime');
    mkdirSync(folder, { recursive: true });
    const add = (id: string, n: number): string => JSON.stringify({ add: { id, url: hook.url, stream: 'films', body: JSON.stringify({ event: 'created', cursor: `old-${n}`, stream: 'films', id: n, data: { id: n } }), attempts: 2, due: Date.now() } });
    const lines = [add('done-one', 1), add('pending-one', 2), JSON.stringify({ done: 'done-one' }), JSON.stringify({ retry: 'pending-one', attempts: 3, due: Date.now() + 1000 }), '{"add":{"id":"torn'];
    writeFileSync(path.join(folder, 'outbox.jsonl'), lines.join('\n'));
    const kernel = new Kernel(buildConfig({ http: { host: '127.0.0.1', port: 0, transport: 'node' }, log: { level: 'silent' }, realtime: { webhooks: [{ url: hook.url }] } }, app.root), { plugins: [] });
    await kernel.boot();
    cleanups.push(() => kernel.shutdown());
    await until(() => hook.received.length === 1);
    expect(hook.received[0]!.id).toBe('pending-one');
    expect(readdirSync(folder)).not.toContain('outbox.jsonl');
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.received).toHaveLength(1);
  });

  it('an outbox past outbox_bytes (an endpoint down for long) moves its oldest deliveries to the dead letters and stays bounded on disk', async () => {
    const app = await boot('node', { realtime: { webhooks: [{ url: 'http://127.0.0.1:9/down' }], webhook_retry_base_ms: 600000, webhook_timeout_ms: 500, outbox_bytes: 1048576 } });
    const text = 'w'.repeat(100 * 1024);
    for (let id = 10; id < 40; id++) expect((await app.request('POST', '/api/streams/films/entries', { id, title: `${text}${id}` })).status).toBe(201);
    const folder = path.join(app.root, 'streams/data/.realtime');
    let webhooks: Record<string, unknown> = {};
    await eventually(async () => {
      webhooks = (await app.request('GET', '/readyz')).json.details.webhooks;
      expect((webhooks.dead_letters as { count: number } | undefined)?.count ?? 0).toBeGreaterThan(10);
    }, 10000);
    const outbox = readdirSync(folder).filter((n) => n.startsWith('outbox-')).reduce((sum, n) => sum + statSync(path.join(folder, n)).size, 0);
    // The budget plus the segment being written (an eighth of it) and one delivery.
    expect(outbox).toBeLessThan(1048576 + 131072 + 2 * 110 * 1024);
    expect((webhooks.pending as number) + (webhooks.dead_letters as { count: number }).count).toBe(30);
    // Each delivery given up once: two publishes past the budget both looked at a delivery being
    // buried and wrote it twice (31 of 30 on CI once writes got faster).
    const ids = readFileSync(path.join(folder, 'dead-letters.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
