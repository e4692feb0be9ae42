/**
 * `streams migrate` to MongoDB (issue #32), on the stand-in replica set (test/mongodb): the
 * command's own function on a booted kernel whose mongodb plugin talks to the stand-in.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateStreams } from '../../kernel/cli/migrate.js';
import type { TestApp } from '../helpers/app.js';
import { ON_STAND_IN, StandInServer } from '../mongodb/fake-server.js';
import { startNodes } from '../mongodb/stand-in-app.js';

const notes = { id: 'notes', fields: { id: { type: 'integer' }, title: { type: 'string', required: true }, tags: { type: 'array' } } };
const rows = Array.from({ length: 25 }, (_, i) => ({ id: i + 1, title: `note ${i + 1}`, tags: i % 2 === 0 ? ['even'] : [] }));

let apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

describe(`streams migrate to the database source ${ON_STAND_IN}`, () => {
  it('copies, verifies count and digest, then switches the definition: the same entries are served from MongoDB', async () => {
    const server = new StandInServer();
    apps = await startNodes(server, 1, { streams: { notes }, data: { notes: rows } });
    const app = apps[0]!;
    const before = (await app.request('GET', '/api/streams/notes/entries?per_page=100')).json.data;

    const dry = await migrateStreams(app.kernel, { to: { type: 'database', connection: 'default' }, mode: 'dry-run' });
    expect(dry).toEqual([expect.objectContaining({ stream: 'notes', from: 'filebase', to: 'database', entries: 25 })]);
    expect(dry[0]!.copied).toBeUndefined();

    const reports = await migrateStreams(app.kernel, { to: { type: 'database', connection: 'default' }, mode: 'switch' });
    expect(reports).toEqual([expect.objectContaining({ stream: 'notes', entries: 25, switched: true, copied: { entries: 25, digest: reports[0]!.digest, verified: true } })]);
    expect(reports[0]!.problem).toBeUndefined();
    const definition = JSON.parse(readFileSync(path.join(app.root, 'streams', 'notes.json'), 'utf8')) as { config: { source: unknown } };
    expect(definition.config.source).toEqual({ type: 'database', connection: 'default' });

    const after = await app.request('GET', '/api/streams/notes/entries?per_page=100');
    expect(after.status).toBe(200);
    expect(after.json.data).toEqual(before);
    // The old files stay where they were: switching back needs no restore.
    expect(readFileSync(path.join(app.root, 'streams', 'data', 'notes', '1.json'), 'utf8')).toContain('note 1');

    // A second run finds the target holding entries and refuses without --overwrite.
    const again = await migrateStreams(app.kernel, { to: { type: 'database', connection: 'default' }, mode: 'copy' });
    expect(again[0]!.problem).toBe('already on this source');
  });

  it('a target that already holds entries is refused unless --overwrite, and nothing switches', async () => {
    const server = new StandInServer();
    apps = await startNodes(server, 1, { streams: { notes }, data: { notes: rows } });
    const kernel = apps[0]!.kernel;
    const to = { type: 'database', connection: 'default' };
    expect((await migrateStreams(kernel, { to, mode: 'copy' }))[0]!.copied?.verified).toBe(true);
    const refused = await migrateStreams(kernel, { to, mode: 'switch' });
    expect(refused[0]!.problem).toBe('the target already holds 25 entries: --overwrite empties it first');
    expect(refused[0]!.switched).toBeUndefined();
    const overwritten = await migrateStreams(kernel, { to, mode: 'switch', overwrite: true });
    expect(overwritten[0]).toMatchObject({ switched: true, copied: { entries: 25, verified: true } });
  });
});
