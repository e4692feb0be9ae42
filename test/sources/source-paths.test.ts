import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * A definition's source path decides which files become entries (read and written over
 * the API). Found in review: a definition written over the API could serve and rewrite
 * the config file, or write new definition files through a filebase stream.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const post = (body: object) => app!.request('POST', '/api/streams', body);

describe('source paths of definitions written over the API', () => {
  it('must stay inside the data folder', async () => {
    app = await startApp({ files: { 'app.json': '{"secret":"x"}', 'content/readme.json': '{}' } });
    const refused = [
      { id: 'leak', config: { source: { type: 'file', format: 'json', file: 'app.json' } } },
      { id: 'defs', config: { source: { type: 'filebase', path: 'streams' } } },
      { id: 'root', config: { source: { type: 'filebase', path: '.' } } },
      { id: 'content', config: { source: { type: 'filebase', path: 'content' } } },
      { id: 'mods', config: { source: { type: 'file', file: 'node_modules/x/package.json' } } },
    ];
    for (const body of refused) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(409);
      expect(res.json.errors[0].meta.field).toMatch(/^\/config\/source\/(path|file)$/);
    }
    expect((await post({ id: 'ok', config: { source: { type: 'file', format: 'json', file: 'streams/data/ok.json' } } })).status).toBe(201);
    expect((await post({ id: 'ok2', config: { source: { type: 'filebase', path: 'streams/data/elsewhere' } } })).status).toBe(201);
  });

  it('cannot leave through a symbolic link inside the data folder', async () => {
    app = await startApp();
    mkdirSync(path.join(app.root, 'streams', 'data'), { recursive: true });
    symlinkSync('/etc', path.join(app.root, 'streams', 'data', 'etc'));
    const res = await post({ id: 'pw', config: { source: { type: 'file', format: 'csv', file: 'streams/data/etc/passwd' } } });
    expect(res.status).toBe(409);
    expect(res.json.errors[0].message).toMatch(/application root/);
  });

  it('an operator may point a definition file elsewhere in the app, and API clients may still edit it', async () => {
    app = await startApp({
      streams: { pages: { config: { source: { type: 'filebase', path: 'content/pages' } }, fields: { id: 'integer', title: 'string' } } },
      files: { 'content/pages/1.json': { id: 1, title: 'Home' } },
    });
    expect((await app.request('GET', '/api/streams/pages/entries/1')).json.data.title).toBe('Home');
    expect((await app.request('PATCH', '/api/streams/pages', { name: 'Site pages' })).status).toBe(200);
    const moved = await app.request('PATCH', '/api/streams/pages', { config: { source: { type: 'filebase', path: 'content/other' } } });
    expect(moved.status).toBe(409);
  });

  it('refuses, even in a definition file, a filebase folder that is the definitions folder', async () => {
    const error = await startApp({ streams: { bad: { config: { source: { type: 'filebase', path: 'streams' } } } } }).then(
      (started) => {
        app = started;
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/bad\.json at \/config\/source\/path: must not be \(or contain\) the definitions folder/);
  });
});
