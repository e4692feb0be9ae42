import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Kernel } from '../../kernel/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

/** Issue #27 item 6: loud typos (unknown definition keys) and live `extends` parents. */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const fields = { id: 'integer', name: 'string' };

describe('unknown definition keys', () => {
  it('are accepted, reported in /readyz and in meta.warnings with the near key, and a key an addon declares is not', async () => {
    const addon = definePlugin({
      name: 'seo-addon',
      register({ hooks }) {
        hooks.on('definition.extend', ({ extend }) => extend('seo', { type: 'object' }));
      },
    });
    app = await startApp({ plugins: [addon], streams: { things: { fields, confg: { x: 1 }, seo: { title: 't' } } as never } });
    const shown = await app.request('GET', '/api/streams/things');
    expect(shown.status).toBe(200);
    expect(shown.json.data.confg).toEqual({ x: 1 });
    expect(shown.json.meta.warnings).toHaveLength(1);
    expect(shown.json.meta.warnings[0]).toContain('`confg`');
    expect(shown.json.meta.warnings[0]).toContain('did you mean `config`?');
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json.details.streams.warnings).toEqual([expect.objectContaining({ stream: 'things', reason: expect.stringContaining('`confg`') })]);
    // A write through the API says so too; a definition without unknown keys has no warnings.
    const created = await app.request('POST', '/api/streams', { id: 'other', fields, colour: 'red' });
    expect(created.status).toBe(201);
    expect(created.json.meta.warnings[0]).toContain('`colour`');
    const plain = await app.request('POST', '/api/streams', { id: 'plain', fields });
    expect(plain.status).toBe(201);
    expect(plain.json.meta.warnings).toBeUndefined();
  });

  it('are logged once at boot, naming the stream', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'typo-log-'));
    mkdirSync(path.join(root, 'streams'), { recursive: true });
    writeFileSync(path.join(root, 'streams/things.json'), JSON.stringify({ id: 'things', fields, confg: {} }));
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const kernel = new Kernel(buildConfig({ http: { port: 0 } }, root), { logger });
    try {
      await kernel.boot();
      const warned = lines.filter((l) => String(l.msg).includes('`confg`'));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatchObject({ stream: 'things' });
      expect(String(warned[0]!.msg)).toContain('did you mean `config`?');
    } finally {
      await kernel.shutdown();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('extends parents deleted while serving', () => {
  it('children are unserved at once (404 naming the parent, listed in /readyz) and served again when the parent is back', async () => {
    app = await startApp({
      streams: { base: { fields }, child: { extends: 'base', fields: { extra: 'string' } }, grandchild: { extends: 'child', fields: { more: 'string' } } },
      data: { child: [{ id: 1, name: 'one', extra: 'x' }] },
    });
    expect((await app.request('GET', '/api/streams/child/entries/1')).status).toBe(200);
    const parentFile = path.join(app.root, 'streams/base.json');
    const parent = readFileSync(parentFile);
    rmSync(parentFile);
    await eventually(async () => {
      const res = await app!.request('GET', '/api/streams/child/entries/1');
      expect(res.status).toBe(404);
      expect(res.json.errors[0].message).toContain('[base]');
    });
    expect((await app.request('GET', '/api/streams/grandchild')).status).toBe(404);
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json.details.streams.unserved.map((u: { stream: string }) => u.stream).sort()).toEqual(['child', 'grandchild']);
    writeFileSync(parentFile, parent);
    await eventually(async () => expect((await app!.request('GET', '/api/streams/child/entries/1')).json.data?.extra).toBe('x'));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/grandchild')).status).toBe(200));
    expect((await app.request('GET', '/readyz')).json.details?.streams?.unserved).toBeUndefined();
  });
});
