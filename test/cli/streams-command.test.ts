/**
 * The `streams` command end to end (issue #32): spawned as an operator runs it, on apps in
 * temporary folders, against dist/ (run `npm run build` first).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, STREAMS_BIN } from '../helpers/cli.js';
import { REPO, startServer } from '../helpers/server-process.js';

const work = mkdtempSync(path.join(tmpdir(), 'streams-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

/** Every file under a folder (relative path -> bytes as text), for byte-for-byte comparisons. */
function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, file);
    // Entry files only: the realtime history (.realtime/) and lock files are the server's own.
    if (entry.isFile() && !relative.split(path.sep).some((part) => part.startsWith('.'))) out[relative] = readFileSync(file, 'utf8');
  }
  return out;
}

describe('streams --version and --help', () => {
  it('prints the package version, on the command and on every subcommand', async () => {
    expect(await runCli(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
    for (const command of ['serve', 'init', 'check', 'export', 'import', 'migrate', 'types']) {
      const result = await runCli([command, '--version']);
      expect(result, command).toMatchObject({ code: 0, stdout: `${version}\n` });
    }
  });

  it('--help lists the subcommands; each subcommand has its own usage; an unknown one exits 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['serve', 'init', 'check', 'export', 'import', 'migrate', 'types']) expect(help.stdout).toContain(`  ${command}`);
    for (const command of ['serve', 'init', 'check', 'export', 'import', 'migrate', 'types']) {
      const result = await runCli([command, '--help']);
      expect(result.code, command).toBe(0);
      expect(result.stdout, command).toMatch(/^Usage: streams /);
    }
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect((await runCli(['check'])).code).toBe(2);
  });
});

describe('streams init and serve', () => {
  it('init writes an application that serve boots and serves', async () => {
    const dir = path.join(work, 'init-app');
    const created = await runCli(['init', dir]);
    expect(created.code).toBe(0);
    expect(Object.keys(filesOf(dir)).sort()).toEqual(['README.md', 'config.json', 'streams/data/notes/1.json', 'streams/notes.json']);
    const server = await startServer(['serve', '--config', path.join(dir, 'config.json'), '--port', '0'], REPO, STREAMS_BIN);
    try {
      const res = await request(`${server.url}/api/streams/notes/entries/1`);
      expect(res.statusCode).toBe(200);
      expect(((await res.body.json()) as { data: { title: string } }).data.title).toBe('Hello');
      // The boot banner: one line with the url, the transport and the reference page.
      const listening = server.stdout().split('\n').find((line) => line.includes('"msg":"listening"'))!;
      expect(JSON.parse(listening)).toMatchObject({ url: server.url, links: { docs: `${server.url}/api/docs` } });
      expect(typeof JSON.parse(listening).transport).toBe('string');
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.exit).toBe(0);
    }
    // A folder that holds something is never written into.
    const again = await runCli(['init', dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not empty');
  });
});

describe('streams check', () => {
  const dir = path.join(work, 'check-app');

  it('exits 0 on a good application, with a summary', async () => {
    expect((await runCli(['init', dir])).code).toBe(0);
    const result = await runCli(['check', '--config', path.join(dir, 'config.json')]);
    expect(result).toMatchObject({ code: 0, stdout: '1 streams, 1 entries: 0 errors, 0 warnings\n' });
  });

  it('exits 1 naming every broken definition: file, JSON path and problem; --json for machines', async () => {
    writeFileSync(path.join(dir, 'streams', 'typo.json'), JSON.stringify({ id: 'typo', fields: { x: { type: 'strnig' } } }));
    writeFileSync(path.join(dir, 'streams', 'broken.json'), '{ "id": "broken", ');
    const result = await runCli(['check', '--config', path.join(dir, 'config.json')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`error: ${path.join(dir, 'streams', 'typo.json')} at /fields/x/type: Field [x] of stream [typo] has unknown type [strnig]`);
    expect(result.stdout).toContain(`error: ${path.join(dir, 'streams', 'broken.json')} at /: is not valid JSON`);
    expect(result.stdout).toMatch(/1 streams, 1 entries: 2 errors, 0 warnings\n$/);

    const json = await runCli(['check', '--config', path.join(dir, 'config.json'), '--json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { ok: boolean; errors: Array<{ file: string; path: string; problem: string }> };
    expect(report.ok).toBe(false);
    expect(report.errors).toContainEqual(expect.objectContaining({ file: path.join(dir, 'streams', 'typo.json'), path: '/fields/x/type', problem: expect.stringContaining('unknown type [strnig]') }));
    rmSync(path.join(dir, 'streams', 'typo.json'));
    rmSync(path.join(dir, 'streams', 'broken.json'));
  });

  it('an entry value its field type cannot cast is a warning (exit 0); an unreadable entry file is an error naming it', async () => {
    writeFileSync(path.join(dir, 'streams', 'data', 'notes', '2.json'), JSON.stringify({ id: 2, title: 'Odd', done: 'maybe' }));
    const warned = await runCli(['check', '--config', path.join(dir, 'config.json')]);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toMatch(/^warning: .*2\.json: .*done/m);
    expect(warned.stdout).toMatch(/0 errors, 1 warnings\n$/);
    writeFileSync(path.join(dir, 'streams', 'data', 'notes', '2.json'), '{ not json');
    const failed = await runCli(['check', '--config', path.join(dir, 'config.json')]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`error: ${path.join(dir, 'streams', 'data', 'notes', '2.json')}: skipping unreadable entry file`);
    rmSync(path.join(dir, 'streams', 'data', 'notes', '2.json'));
  });

  it('a config problem is an error too', async () => {
    writeFileSync(path.join(work, 'bad-config.json'), JSON.stringify({ http: { port: 'eighty' } }));
    const result = await runCli(['check', '--config', path.join(work, 'bad-config.json'), '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).errors[0].problem).toContain('/http/port');
  });
});

describe('streams export and import', () => {
  const source = path.join(work, 'library');
  const target = path.join(work, 'restored');
  const dump = path.join(work, 'library.ndjson');

  it('a round trip into an empty application gives byte-identical entry files', async () => {
    // The embedded library, written once by the server (import) so every file is in the server's own form.
    const seed = path.join(work, 'seed');
    writeFileSync(path.join(work, 'seed.json'), JSON.stringify({ streams: { path: path.join(REPO, 'streams'), data_path: path.join(REPO, 'streams', 'data') } }));
    expect((await runCli(['init', seed])).code).toBe(0);
    const first = await runCli(['export', '--config', path.join(REPO, 'config', 'default.json'), '--definitions', '--out', path.join(work, 'seed.ndjson')]);
    expect(first.code).toBe(0);
    expect((await runCli(['init', source])).code).toBe(0);
    const seeded = await runCli(['import', '--config', path.join(source, 'config.json'), '--in', path.join(work, 'seed.ndjson')]);
    expect(seeded).toMatchObject({ code: 0, stdout: 'import: 21 created, 0 updated, 0 refused, 3 streams created\n' });

    const exported = await runCli(['export', '--config', path.join(source, 'config.json'), '--definitions', '--out', dump]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe('');
    const lines = readFileSync(dump, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; stream: string });
    expect(lines.filter((l) => l.kind === 'definition').map((l) => l.stream).sort()).toEqual(['authors', 'books', 'genres', 'notes']);
    expect(lines.filter((l) => l.kind === 'entry')).toHaveLength(22);

    expect((await runCli(['init', target])).code).toBe(0);
    const imported = await runCli(['import', '--config', path.join(target, 'config.json'), '--in', dump]);
    expect(imported).toMatchObject({ code: 0, stdout: 'import: 21 created, 1 updated, 0 refused, 3 streams created\n' });
    expect(filesOf(path.join(target, 'streams', 'data'))).toEqual(filesOf(path.join(source, 'streams', 'data')));
    // Importing again changes nothing and says so.
    const again = await runCli(['import', '--config', path.join(target, 'config.json'), '--in', dump]);
    expect(again).toMatchObject({ code: 0, stdout: 'import: 0 created, 22 updated, 0 refused\n' });
  });

  it('relative --out, --in and --state name files where the command ran, even while a large stream loads', async () => {
    // Loaded in slices with the working directory inside the stream's folder (folder-reads.ts):
    // the command's own files are resolved before that, never against the folder.
    const app = path.join(work, 'relative-app');
    expect((await runCli(['init', app])).code).toBe(0);
    const notes = path.join(app, 'streams', 'data', 'notes');
    for (let id = 2; id <= 3_000; id++) writeFileSync(path.join(notes, `${id}.json`), JSON.stringify({ id, title: `note ${id}` }));
    const here = mkdtempSync(path.join(work, 'cwd-'));
    const exported = await runCli(['export', '--config', path.join(app, 'config.json'), '--out', 'notes.ndjson'], { cwd: here });
    expect(exported.code).toBe(0);
    expect(readFileSync(path.join(here, 'notes.ndjson'), 'utf8').trim().split('\n')).toHaveLength(3_000);
    expect(readdirSync(notes).filter((name) => !name.endsWith('.json') && !name.startsWith('.'))).toEqual([]);
    const copy = path.join(work, 'relative-copy');
    expect((await runCli(['init', copy])).code).toBe(0);
    const imported = await runCli(['import', '--config', path.join(copy, 'config.json'), '--in', 'notes.ndjson', '--state', 'import.state'], { cwd: here });
    expect(imported).toMatchObject({ code: 0, stdout: 'import: 2999 created, 1 updated, 0 refused\n' });
  });

  it('export to stdout is nothing but data; --stream picks streams; an unknown one is an error', async () => {
    const out = await runCli(['export', '--config', path.join(source, 'config.json'), '--stream', 'genres', '--out', '-']);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; stream: string; data: { slug: string } });
    expect(lines.map((l) => l.data.slug)).toEqual(['classics', 'fantasy', 'humour', 'science-fiction']);
    const unknown = await runCli(['export', '--config', path.join(source, 'config.json'), '--stream', 'nope', '--out', '-']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no such stream: nope');
  });

  it('import from stdin names each refused line and its reason, counts the rest, exits 1', async () => {
    const input = [
      JSON.stringify({ kind: 'entry', stream: 'notes', data: { id: 5, title: 'Fine' } }),
      JSON.stringify({ kind: 'entry', stream: 'notes', data: { id: 6 } }),
      'not json',
      JSON.stringify({ kind: 'entry', stream: 'ghosts', data: { id: 1 } }),
    ].join('\n');
    const result = await runCli(['import', '--config', path.join(target, 'config.json'), '--in', '-'], { input });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('import: 1 created, 0 updated, 3 refused\n');
    expect(result.stdout).toMatch(/line 2: .*title field is required/);
    expect(result.stdout).toMatch(/line 3: .*JSON/);
    expect(result.stdout).toContain('line 4: Stream [ghosts] not found: create it first, or export with --definitions so the file carries it.');
  });

  it('definition lines are created in as many passes as their relations need, however the JSON is spaced', async () => {
    // Hand-written or reformatted: `"kind": "definition"` with a space, and a stream listed before those it relates to.
    const definitions = readFileSync(dump, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; stream: string }).filter((l) => l.kind === 'definition');
    const ordered = [...definitions.filter((l) => l.stream === 'books'), ...definitions.filter((l) => l.stream !== 'books')];
    const input = ordered.map((l) => JSON.stringify(l).replaceAll('":', '": ')).join('\n');
    const fresh = path.join(work, 'spaced');
    expect((await runCli(['init', fresh])).code).toBe(0);
    const result = await runCli(['import', '--config', path.join(fresh, 'config.json'), '--in', '-'], { input });
    expect(result).toMatchObject({ code: 0, stdout: 'import: 0 created, 0 updated, 0 refused, 3 streams created\n' });
  });

  it('--resume continues after the last finished batch of an interrupted import', async () => {
    const input = path.join(work, 'resume.ndjson');
    const lines = Array.from({ length: 6 }, (_, i) => JSON.stringify({ kind: 'entry', stream: 'notes', data: { id: 100 + i, title: `n${i}` } }));
    writeFileSync(input, `${lines.join('\n')}\n`);
    // The state an import interrupted after its first batch (lines 1-4) leaves behind.
    writeFileSync(`${input}.import-state`, JSON.stringify({ input, line: 4, created: 4, updated: 0, definitions: 0, refused: [] }));
    const resumed = await runCli(['import', '--config', path.join(target, 'config.json'), '--in', input, '--resume', '--batch', '4']);
    expect(resumed).toMatchObject({ code: 0, stdout: 'import: 6 created, 0 updated, 0 refused\n' });
    // Only lines 5 and 6 were written: the first four were never imported in this test.
    const written = readdirSync(path.join(target, 'streams', 'data', 'notes')).filter((f) => f.startsWith('10'));
    expect(written.sort()).toEqual(['104.json', '105.json']);
    expect(readdirSync(work)).not.toContain('resume.ndjson.import-state');
  });
});

describe('streams migrate to a collection', () => {
  it('dry run by default; --copy copies and verifies count and digest; --switch to a memory-only source is refused', async () => {
    const dir = path.join(work, 'migrate-app');
    expect((await runCli(['init', dir])).code).toBe(0);
    const config = path.join(dir, 'config.json');
    const dry = await runCli(['migrate', '--config', config, '--to', 'collection']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^notes: filebase -> collection, 1 entries, sha256 [0-9a-f]{16}: would move\ndry run: nothing written/);
    const copied = await runCli(['migrate', '--config', config, '--to', 'collection', '--copy', '--json']);
    expect(copied.code).toBe(0);
    const report = JSON.parse(copied.stdout) as { streams: Array<{ entries: number; digest: string; copied: { entries: number; digest: string; verified: boolean } }> };
    expect(report.streams[0]!.copied).toEqual({ entries: 1, digest: report.streams[0]!.digest, verified: true });
    const switched = await runCli(['migrate', '--config', config, '--to', 'collection', '--switch']);
    expect(switched.code).toBe(1);
    expect(switched.stdout).toContain('keeps entries in memory only');
    expect(JSON.parse(readFileSync(path.join(dir, 'streams', 'notes.json'), 'utf8')).config).toBeUndefined();
  });
});

describe('streams types', () => {
  it('says in one line that no server answers, without a stack', async () => {
    const result = await runCli(['types', '--url', 'http://127.0.0.1:9', '--out', path.join(work, 'types.ts')]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('cannot reach http://127.0.0.1:9/api/openapi.json (ECONNREFUSED)');
  });
});
