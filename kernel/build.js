#!/usr/bin/env node
// `npm run build` (and `prepare`, so every `npm install`): compile into a fresh folder next
// to dist/ and swap it in with renames, so a server running from this checkout (or an app
// that depends on the kernel) never sees dist/ missing or half written. The old tree is
// renamed away before it is removed: modules a running process already loaded stay valid.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from './bundle.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// STREAMS_BUILD_OUT: build somewhere else (the test of this script, which must not swap the dist/ other tests run).
const dist = process.env.STREAMS_BUILD_OUT ? path.resolve(process.env.STREAMS_BUILD_OUT) : path.join(root, 'dist');
const fresh = path.join(path.dirname(dist), `.dist-build-${process.pid}`);
const old = path.join(path.dirname(dist), `.dist-old-${process.pid}`);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(fresh, { recursive: true, force: true });
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', fresh], { stdio: 'inherit' });
if (result.status !== 0) {
  rmSync(fresh, { recursive: true, force: true });
  process.exit(result.status ?? 1);
}
// Start-up: the modules bundled into entry points and shared chunks (kernel/bundle.js).
try {
  await bundle(fresh);
} catch (error) {
  rmSync(fresh, { recursive: true, force: true });
  process.stderr.write(`build: bundling failed: ${error.message}\n`);
  process.exit(1);
}
// Two renames: the window without a dist/ is one syscall wide, never a whole compile.
if (existsSync(dist)) renameSync(dist, old);
renameSync(fresh, dist);
rmSync(old, { recursive: true, force: true });
