import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { buildConfig, Kernel } from '../../kernel/index.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Issue #27 items 2-4 against real servers and real files: definitions are never clobbered,
 * nothing outside the application root is followed, and bytes that are not UTF-8 survive.
 */
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});
const outside = mkdtempSync(path.join(os.tmpdir(), 'outside-root-'));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

const fields = { id: 'integer', name: 'string' };
/** Latin-1 "café" and a lone continuation byte: not UTF-8. */
const NOT_UTF8 = Buffer.concat([Buffer.from('{"id": 1, "name": "caf'), Buffer.from([0xe9, 0x80]), Buffer.from('"}\n')]);

describe('definitions are never clobbered (item 2)', () => {
  for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
    it(`${method} of a definition whose file holds invalid JSON answers 409 naming the file, which stays byte-identical`, async () => {
      app = await startApp({ streams: { things: { fields } } });
      const file = path.join(app.root, 'streams/things.json');
      const edit = Buffer.from('{"id": "things", "name": "half an edit", "fields": {');
      writeFileSync(file, edit);
      const res = await app.request(method, '/api/streams/things', method === 'DELETE' ? undefined : { name: 'from the API', fields });
      expect(res.status).toBe(409);
      expect(res.json.errors[0].message).toContain('streams/things.json');
      expect(readFileSync(file).equals(edit)).toBe(true);
    });
  }

  it('a self stream entry write refuses (409) while its definition file is unreadable, and keeps the file', async () => {
    app = await startApp({ streams: { inline: { fields, config: { source: { type: 'self' } }, data: [{ id: 1, name: 'a' }] } } });
    const file = path.join(app.root, 'streams/inline.json');
    const edit = Buffer.from('{"id": "inline", "data": [');
    writeFileSync(file, edit);
    const res = await app.request('PATCH', '/api/streams/inline/entries/1', { name: 'b' });
    expect(res.status).toBe(409);
    expect(readFileSync(file).equals(edit)).toBe(true);
  });

  it('PATCH merges into a hand edit of the definition file not synced yet (other keys kept)', async () => {
    app = await startApp({ streams: { things: { fields } }, config: { streams: { watch: false } } });
    const file = path.join(app.root, 'streams/things.json');
    const onDisk = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...onDisk, description: 'written by hand' }));
    const res = await app.request('PATCH', '/api/streams/things', { name: 'Renamed' });
    expect(res.status).toBe(200);
    const after = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(after).toMatchObject({ name: 'Renamed', description: 'written by hand' });
  });
});

describe('nothing outside the root (item 3)', () => {
  it('an entry file linked to /etc/passwd (md format) is not served, is listed in /readyz, and a write does not go through it', async () => {
    app = await startApp({ streams: { pages: { fields: { id: 'string', title: 'string', body: 'string' }, config: { source: { type: 'filebase', format: 'md' } } } } });
    const folder = path.join(app.root, 'streams/data/pages');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'home.md'), '---\ntitle: Home\n---\nhello\n');
    symlinkSync('/etc/passwd', path.join(folder, 'passwd.md'));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/pages/entries/home')).status).toBe(200));
    const one = await app.request('GET', '/api/streams/pages/entries/passwd');
    expect(one.status).not.toBe(200);
    expect(one.text).not.toContain('root:');
    const list = await app.request('GET', '/api/streams/pages/entries');
    expect(list.text).not.toContain('root:');
    await eventually(async () => {
      const ready = await app!.request('GET', '/readyz');
      expect(JSON.stringify(ready.json.details?.streams?.warnings ?? [])).toContain('passwd.md');
    });
    expect((await app.request('PATCH', '/api/streams/pages/entries/passwd', { title: 'x' })).status).toBe(409);
  });

  it('a linked entry inside the root keeps working; a definition linked from outside is not loaded', async () => {
    writeFileSync(path.join(outside, 'evil.json'), JSON.stringify({ id: 'evil', fields }));
    app = await startApp({
      streams: { things: { fields } },
      files: { 'shared/one.json': JSON.stringify({ id: 1, name: 'linked inside' }) },
    });
    const data = path.join(app.root, 'streams/data/things');
    mkdirSync(data, { recursive: true });
    symlinkSync(path.join(app.root, 'shared/one.json'), path.join(data, '1.json'));
    symlinkSync(path.join(outside, 'evil.json'), path.join(app.root, 'streams/evil.json'));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/things/entries/1')).json.data?.name).toBe('linked inside'));
    await eventually(async () => expect(JSON.stringify((await app!.request('GET', '/readyz')).json.details?.streams?.warnings ?? [])).toContain('evil.json'));
    expect((await app.request('GET', '/api/streams/evil')).status).toBe(404);
  });

  it('a file source whose file becomes a link out of the root is not read nor written through (409), and /readyz warns', async () => {
    const target = path.join(outside, 'rows.csv');
    writeFileSync(target, 'id,name\n1,secret\n');
    app = await startApp({ streams: { rows: { fields, config: { source: { type: 'file', format: 'csv', file: 'rows.csv' } } } }, files: { 'placeholder.txt': '' } });
    symlinkSync(target, path.join(app.root, 'rows.csv'));
    await eventually(async () => expect(JSON.stringify((await app!.request('GET', '/readyz')).json.details?.streams?.warnings ?? [])).toContain('rows.csv'));
    // The last good version (no file: no entries) stays served; nothing of the linked file is.
    expect((await app.request('GET', '/api/streams/rows/entries')).text).not.toContain('secret');
    expect((await app.request('POST', '/api/streams/rows/entries', { id: 2, name: 'x' })).status).toBe(409);
    expect(readFileSync(target, 'utf8')).toBe('id,name\n1,secret\n');
  });

  it('a filebase folder replaced by a link out of the root while serving: every write of the batch is refused (409), nothing is written there', async () => {
    // The folder's link check runs once per group-committed batch (issue #33), before any file is touched.
    const away = path.join(outside, 'things-away');
    mkdirSync(away);
    app = await startApp({ streams: { things: { fields } }, data: { things: [{ id: 1, name: 'one' }] } });
    const data = path.join(app.root, 'streams/data/things');
    expect((await app.request('PATCH', '/api/streams/things/entries/1', { name: 'uno' })).status).toBe(200);
    rmSync(data, { recursive: true });
    symlinkSync(away, data);
    const answers = await Promise.all([
      app.request('POST', '/api/streams/things/entries', { id: 2, name: 'two' }),
      app.request('POST', '/api/streams/things/entries', { id: 3, name: 'three' }),
      app.request('PATCH', '/api/streams/things/entries/1', { name: 'eins' }),
    ]);
    for (const answer of answers) expect(answer.status, answer.text).toBe(409);
    // The creates meet the folder's check; the PATCH is refused before, its file read through the link is not followed.
    for (const answer of answers.slice(0, 2)) expect(answer.text).toContain('application root');
    expect(readdirSync(away)).toEqual([]);
  });

  it('an import that leads out through a link is refused; imports that import again are refused naming the chain', async () => {
    writeFileSync(path.join(outside, 'fields.json'), JSON.stringify({ id: 'integer', secret: 'string' }));
    // Over the API imports must also stay in the definitions folder: the links are made there.
    app = await startApp({ files: { 'streams/fields/a.json': JSON.stringify({ id: 'integer', more: '@streams/fields/a.json' }) } });
    symlinkSync(outside, path.join(app.root, 'streams/fields/out'));
    const out = await app.request('POST', '/api/streams', { id: 'linked', fields: '@streams/fields/out/fields.json' });
    expect(out.status).toBe(409);
    expect(out.text).toContain('not followed');
    const cycle = await app.request('POST', '/api/streams', { id: 'cyclic', fields: '@streams/fields/a.json' });
    expect(cycle.status).toBe(409);
    expect(cycle.text).toContain('@streams/fields/a.json -> @streams/fields/a.json');
  });
});

describe('bytes kept (item 4)', () => {
  it('filebase: an edit in place of a file the server just wrote (same inode, same size) is taken in before the next write', async () => {
    // The store skips reading a file whose stamp (inode, size, mtime) is the one it wrote (issue #33):
    // an editor that rewrites the file in place keeps the inode and here the size, but not the mtime.
    app = await startApp({ streams: { things: { fields: { ...fields, size: 'integer' } } }, data: { things: [{ id: 1, name: 'aaaa', size: 1 }] } });
    const file = path.join(app.root, 'streams/data/things/1.json');
    expect((await app.request('PATCH', '/api/streams/things/entries/1', { name: 'bbbb' })).status).toBe(200);
    const written = readFileSync(file, 'utf8');
    expect(written).toContain('"bbbb"');
    writeFileSync(file, written.replace('"bbbb"', '"cccc"')); // truncate and write: same inode
    const patched = await app.request('PATCH', '/api/streams/things/entries/1', { size: 2 });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toMatchObject({ id: 1, name: 'cccc', size: 2 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ name: 'cccc', size: 2 });
  });

  it('filebase: a second file of a key, set aside while the first serves it, is served once the first is removed', async () => {
    // Its stamp must not be kept while it is set aside: the removal reads it again (issue #33 review).
    app = await startApp({ streams: { notes: { fields: { id: 'integer', text: 'string' } } }, data: { notes: [{ id: 1, text: 'first' }] } });
    const folder = path.join(app.root, 'streams/data/notes');
    writeFileSync(path.join(folder, 'one.json'), '{"id": 1, "text": "second"}\n');
    await eventually(async () => expect((await app!.request('PATCH', '/api/streams/notes/entries/1', { text: 'x' })).status).toBe(409));
    rmSync(path.join(folder, '1.json'));
    await eventually(async () => expect((await app!.request('GET', '/api/streams/notes/entries/1')).json.data).toMatchObject({ id: 1, text: 'second' }));
    expect((await app.request('PATCH', '/api/streams/notes/entries/1', { text: 'third' })).status).toBe(200);
    expect(JSON.parse(readFileSync(path.join(folder, 'one.json'), 'utf8'))).toMatchObject({ id: 1, text: 'third' });
  });

  it('filebase: an entry file that is not UTF-8 is named in /readyz, a PATCH answers 409 and its bytes survive', async () => {
    app = await startApp({ streams: { things: { fields } }, data: { things: [{ id: 2, name: 'two' }] } });
    const file = path.join(app.root, 'streams/data/things/1.json');
    writeFileSync(file, NOT_UTF8);
    await eventually(async () => {
      const ready = await app!.request('GET', '/readyz');
      expect(JSON.stringify(ready.json.details?.streams?.degraded ?? [])).toContain('not valid UTF-8');
    });
    expect((await app.request('PATCH', '/api/streams/things/entries/1', { name: 'x' })).status).toBe(409);
    expect((await app.request('PUT', '/api/streams/things/entries/1', { name: 'x' })).status).toBe(409);
    // A read says why, rather than a 404 that would claim the entry does not exist.
    const read = await app.request('GET', '/api/streams/things/entries/1');
    expect(read.status).toBe(409);
    expect(read.json.errors[0].message).toMatch(/not valid UTF-8/);
    expect((await app.request('GET', '/api/streams/things/entries/2')).status).toBe(200);
    expect((await app.request('GET', '/api/streams/things/entries/3')).status).toBe(404);
    expect(readFileSync(file).equals(NOT_UTF8)).toBe(true);
  });

  it('filebase at boot: the undecodable file is left out of the list, listed in /readyz, and never rewritten', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'undecodable-boot-'));
    mkdirSync(path.join(root, 'streams/data/things'), { recursive: true });
    writeFileSync(path.join(root, 'streams/things.json'), JSON.stringify({ id: 'things', fields }));
    writeFileSync(path.join(root, 'streams/data/things/2.json'), JSON.stringify({ id: 2, name: 'two' }));
    const file = path.join(root, 'streams/data/things/1.json');
    writeFileSync(file, NOT_UTF8);
    const kernel = new Kernel(buildConfig({ http: { port: 0 }, log: { level: 'silent' } }, root));
    await kernel.boot();
    try {
      const url = kernel.get(HTTP_SERVER).url;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read deep envelope paths; `expect` does the checking
      const get = async (route: string): Promise<{ status: number; json: any }> => {
        const res = await request(`${url}${route}`);
        return { status: res.statusCode, json: await res.body.json() };
      };
      await eventually(async () => expect(JSON.stringify((await get('/readyz')).json.details?.streams?.degraded ?? [])).toContain('1.json'));
      expect((await get('/api/streams/things/entries')).json.data.map((e: { id: number }) => e.id)).toEqual([2]);
      const read = await get('/api/streams/things/entries/1');
      expect(read.status).toBe(409);
      expect(read.json.errors[0].message).toMatch(/entry \[1\] is not served: .*not valid UTF-8/);
      const patch = await request(`${url}/api/streams/things/entries/1`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"name": "x"}' });
      await patch.body.dump();
      expect(patch.statusCode).toBe(409);
      expect(readFileSync(file).equals(NOT_UTF8)).toBe(true);
    } finally {
      await kernel.shutdown();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('file source (json): undecodable bytes make reads and writes answer 409 and the file is byte-identical', async () => {
    app = await startApp({ streams: { list: { fields, config: { source: { type: 'file', file: 'list.json' } } } }, files: { 'list.json': '[]' } });
    const file = path.join(app.root, 'list.json');
    const bytes = Buffer.concat([Buffer.from('[{"id": 1, "name": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]')]);
    writeFileSync(file, bytes);
    await eventually(async () => expect(JSON.stringify((await app!.request('GET', '/readyz')).json.details?.streams?.degraded ?? [])).toContain('not valid UTF-8'));
    expect((await app.request('PATCH', '/api/streams/list/entries/1', { name: 'x' })).status).toBe(409);
    expect((await app.request('POST', '/api/streams/list/entries', { id: 3, name: 'x' })).status).toBe(409);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('a definition file that is not UTF-8: PATCH answers 409 and its bytes survive', async () => {
    app = await startApp({ streams: { things: { fields } } });
    const file = path.join(app.root, 'streams/things.json');
    const bytes = Buffer.concat([Buffer.from('{"id": "things", "name": "Caf'), Buffer.from([0xe9]), Buffer.from('", "fields": {"id": "integer"}}')]);
    writeFileSync(file, bytes);
    await eventually(async () => expect(JSON.stringify((await app!.request('GET', '/readyz')).json.details?.streams?.degraded ?? [])).toContain('not valid UTF-8'));
    expect((await app.request('PATCH', '/api/streams/things', { name: 'Café' })).status).toBe(409);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});
