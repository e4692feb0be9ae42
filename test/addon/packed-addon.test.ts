/**
 * The example addon as a user gets it: `npm pack`ed, installed into a fresh application
 * with npm, listed BY PACKAGE NAME in the app's config, booted by `node kernel/boot.js`
 * (the real launcher on dist/) and used over HTTP.
 *
 * Both installs run the shell block "Packed, as your users get it" of docs/addons.md word
 * for word (its paths substituted; only the last line, the boot, is run by the test so it
 * can watch the process): the kernel, not published, is installed from this checkout (a
 * folder link), then the addon's tarball, whose peer dependency it meets, with no flag.
 * npm runs offline and without install scripts (environment, not flags): nothing here
 * needs the registry.
 *
 * The last suite follows docs/addons.md from an empty folder: its package.json, index.js
 * and test file are taken from the doc's code blocks, the addon's own tests run with
 * `npm test`, and the packed addon boots in an application (so the doc cannot rot).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { request } from 'undici';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const addonDir = path.join(repo, 'plugins', 'addon-geo');
const run = promisify(execFile);

const npmVersion = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const hasNpm = npmVersion.status === 0;
if (!hasNpm) console.log(`packed-addon.test.ts: skipped, npm is not available (${npmVersion.error?.message ?? npmVersion.stderr})`);

/** Quiet npm: no audit/fund/update chatter, errors only. */
const npmEnv = { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', npm_config_offline: 'true', npm_config_ignore_scripts: 'true' };

/**
 * Runs docs/addons.md's "Packed, as your users get it" block in `addonDir` (where `npm pack`
 * runs), but its boot line: `/tmp/try` becomes `tryDir`, `/path/to/streams-kernel` this
 * checkout, and the tutorial's package name `addonName`. Returns the application folder.
 */
async function installLikeTheDocs(addonDir: string, tryDir: string, addonName: string): Promise<string> {
  const doc = await readFile(path.join(repo, 'docs', 'addons.md'), 'utf8');
  const lines = blockAfter(doc, '**Packed, as your users get it.**').trimEnd().split('\n');
  const boot = lines.pop()!;
  expect(boot).toMatch(/^node node_modules\/streams-kernel\/kernel\/boot\.js --config app\.json --port 0/);
  const script = lines
    .join('\n')
    .replaceAll('/tmp/try', tryDir)
    .replaceAll('/path/to/streams-kernel', repo)
    .replaceAll('streams-addon-locked', addonName);
  await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: addonDir, env: npmEnv }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`the docs' install recipe failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  return path.join(tryDir, 'app');
}

let tmp: string;
let app: string;
let tarball: string;

beforeAll(async () => {
  if (!hasNpm) return;
  tmp = await mkdtemp(path.join(os.tmpdir(), 'packed-addon-'));
  app = await installLikeTheDocs(addonDir, path.join(tmp, 'geo'), 'streams-addon-geo');
  tarball = path.join(tmp, 'geo', 'streams-addon-geo-0.1.0.tgz');
  await writeFile(
    path.join(app, 'app.json'),
    JSON.stringify({ http: { host: '127.0.0.1' }, log: { level: 'info' }, plugins: ['streams-addon-geo'] }, null, 2),
  );
  await rm(path.join(app, 'streams', 'planets.json'));
  await writeFile(
    path.join(app, 'streams', 'places.json'),
    JSON.stringify({
      name: 'Places',
      geo: { field: 'location', radius_km: 10 },
      fields: { id: 'integer', name: { type: 'string', required: true }, location: { type: 'geopoint', required: true } },
    }),
  );
}, 60_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function start(config = path.join(app, 'app.json')): Promise<ServerProcess> {
  return startServer(['--config', config, '--port', '0'], path.dirname(config));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read deep envelope paths; `expect` does the checking
async function call(url: string, method: 'GET' | 'POST', target: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await request(`${url}${target}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

describe.skipIf(!hasNpm)('the geo addon, packed and installed into an application', () => {
  it('packs only the addon files and installs under its package name', async () => {
    const installed = await readdir(path.join(app, 'node_modules', 'streams-addon-geo'));
    expect(installed.sort()).toEqual(['README.md', 'geo-extension.js', 'geopoint.js', 'index.js', 'near.js', 'package.json', 'rounding.js', 'types.d.ts']);
    expect(path.basename(tarball)).toBe('streams-addon-geo-0.1.0.tgz');
  });

  it('boots with node kernel/boot.js, serves geopoints and near over HTTP, and stops with exit 0 on SIGTERM', async () => {
    const running = await start();
    try {
      const { url } = running;
      const created = await call(url, 'POST', '/api/streams/places/entries', { name: 'Eiffel Tower', location: '48.85837009,2.29448128' });
      expect(created.status).toBe(201);
      expect(created.json.data).toMatchObject({ id: 1, name: 'Eiffel Tower', location: { lat: 48.85837, lng: 2.294481 } });
      expect((await call(url, 'POST', '/api/streams/places/entries', { name: 'Louvre', location: { lat: 48.8606, lng: 2.3376 } })).status).toBe(201);
      expect((await call(url, 'POST', '/api/streams/places/entries', { name: 'Versailles', location: { lat: 48.8049, lng: 2.1204 } })).status).toBe(201);

      const invalid = await call(url, 'POST', '/api/streams/places/entries', { name: 'Nowhere', location: { lat: 120, lng: 0 } });
      expect(invalid.status).toBe(409);
      expect(invalid.json.errors[0]).toMatchObject({ meta: { field: 'location', rule: 'geopoint' } });
      expect(invalid.json.errors[0].message).toMatch(/^The location must be a geographic point/);

      const near = await call(url, 'POST', '/api/streams/places/query', { parameters: [{ near: [48.8584, 2.2945, 5] }] });
      expect(near.status).toBe(200);
      expect(near.json.data.map((e: { name: string }) => e.name).sort()).toEqual(['Eiffel Tower', 'Louvre']);
      // geo.radius_km (10) is the default distance: Versailles (~14 km) stays out.
      const byDefault = await call(url, 'POST', '/api/streams/places/query', { parameters: [{ near: [48.8584, 2.2945] }] });
      expect(byDefault.json.meta.total).toBe(2);
      const wide = await call(url, 'POST', '/api/streams/places/query', { parameters: [{ near: ['location', 48.8584, 2.2945, 20] }] });
      expect(wide.json.meta.total).toBe(3);

      const bad = await call(url, 'POST', '/api/streams/places/query', { parameters: [{ near: [91, 2, 5] }] });
      expect(bad.status).toBe(400);
      expect(bad.json.errors[0].message).toMatch(/latitude/);
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
  });

  it('loads in a plain node process with streams-kernel/testing, as an author tests it (no kernel/main, no vitest setup)', async () => {
    // Regression: importing streams-kernel/addon or /testing outside kernel/main threw
    // "tsyringe requires a reflect polyfill" until they imported reflect-metadata first.
    const script = path.join(app, 'author-test.mjs');
    await writeFile(
      script,
      [
        "import geo from 'streams-addon-geo';",
        "import { startTestApp } from 'streams-kernel/testing';",
        "const app = await startTestApp({ streams: { spots: { fields: { id: 'integer', at: 'geopoint' } } }, plugins: [geo] });",
        'try {',
        "  const created = await app.request('POST', '/api/streams/spots/entries', { at: '1.23456789,2' });",
        "  const near = await app.request('POST', '/api/streams/spots/query', { parameters: [{ near: ['at', 1.2, 2, 10] }] });",
        '  console.log(JSON.stringify({ name: geo.name, status: created.status, at: created.json.data.at, near: near.json.meta.total }));',
        '} finally {',
        '  await app.close();',
        '}',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, [script], { cwd: app });
    expect(JSON.parse(stdout.trim())).toEqual({ name: 'geo', status: 201, at: { lat: 1.234568, lng: 2 }, near: 1 });
  });
});

/** The first fenced code block after `marker` in docs/addons.md. */
function blockAfter(doc: string, marker: string): string {
  const start = doc.indexOf(marker);
  if (start < 0) throw new Error(`docs/addons.md lost its "${marker}" block`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(doc.slice(start));
  if (!match) throw new Error(`no code block after "${marker}"`);
  return match[1]!;
}

describe.skipIf(!hasNpm)('the tutorial of docs/addons.md, followed from an empty folder', () => {
  it('gives an addon whose own tests pass and which installs, boots and vetoes writes', async () => {
    const doc = await readFile(path.join(repo, 'docs', 'addons.md'), 'utf8');
    const folder = path.join(tmp, 'streams-addon-locked');
    await mkdir(path.join(folder, 'test'), { recursive: true });
    await writeFile(path.join(folder, 'package.json'), blockAfter(doc, '**package.json**'));
    await writeFile(path.join(folder, 'index.js'), blockAfter(doc, '**index.js**'));
    await writeFile(path.join(folder, 'types.d.ts'), blockAfter(doc, '**types.d.ts**'));
    await writeFile(path.join(folder, 'test', 'locked.test.js'), blockAfter(doc, '**test/locked.test.js**'));
    await writeFile(path.join(folder, 'README.md'), '# streams-addon-locked\n');
    // "npm install --save-dev /path/to/streams-kernel": a folder outside the project is only linked.
    await run('npm', ['install', '--save-dev', '--no-audit', '--no-fund', '--ignore-scripts', '--offline', repo], { cwd: folder, env: npmEnv });

    const tests = await run('npm', ['test'], { cwd: folder, env: npmEnv }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the tutorial's tests failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    // node:test's summary lines are `# pass 3` on Node 20 and `ℹ pass 3` on Node 22+.
    expect(tests.stdout).toMatch(/^(?:#|ℹ) pass 4\b/m);
    expect(tests.stdout).toMatch(/^(?:#|ℹ) fail 0\b/m);

    // The type-check block, word for word but for where typescript comes from (npm runs offline here:
    // this checkout's copy, the same version): the JavaScript addon that owns a config section checks clean.
    const typeCheck = blockAfter(doc, '**Type-check**').replace('typescript@5.9.3', path.join(repo, 'node_modules', 'typescript'));
    expect(typeCheck).toContain('index.js types.d.ts');
    await run('bash', ['-euo', 'pipefail', '-c', typeCheck], { cwd: folder, env: npmEnv }).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`the tutorial's type-check failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });

    // Section 5, "Packed, as your users get it": its block, word for word.
    const tryApp = await installLikeTheDocs(folder, path.join(tmp, 'try'), 'streams-addon-locked');
    const packed = await readdir(path.join(tryApp, 'node_modules', 'streams-addon-locked'));
    expect(packed.sort()).toEqual(['README.md', 'index.js', 'package.json', 'types.d.ts']);
    expect(JSON.parse(await readFile(path.join(tryApp, 'package.json'), 'utf8')).dependencies).toEqual({
      'streams-addon-locked': expect.stringMatching(/^file:.*streams-addon-locked-0\.1\.0\.tgz$/),
      'streams-kernel': expect.stringMatching(/^file:/),
    });

    const running = await start(path.join(tryApp, 'app.json'));
    try {
      const refused = await call(running.url, 'POST', '/api/streams/planets/entries', { name: 'Hoth' });
      expect(refused.status).toBe(403);
      expect(refused.json.errors[0].message).toBe('Stream [planets] is locked.');
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exit).toBe(0);
  });
});
