#!/usr/bin/env node
// The `streams` command (package.json "bin"): plain JS like boot.js, so it runs without a
// loader; the subcommands are compiled into dist/ by `npm install` (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Durable writes wait in libuv's thread pool for the disk (fdatasync, rename, the folder's
// fsync): 4 threads (libuv's default) left a server under 50 concurrent writers waiting on the
// pool; 16 let concurrent flushes share the journal's commits (issue #33, +14% durable PATCH).
// Read when the pool starts, at its first use: set here, before anything is loaded through it
// (Node 22 and later; Node 20 starts the pool while loading this file). An operator's own value wins.
process.env.UV_THREADPOOL_SIZE ??= '16';
const entry = fileURLToPath(new URL('../dist/kernel/cli/index.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write('streams: dist/ is missing; run `npm install` or `npm run build` first.\n');
  process.exit(1);
}
const { run } = await import(pathToFileURL(entry).href);
const code = await run(process.argv.slice(2));
// serve keeps running (undefined); a tool ends with its code once its output is flushed.
if (code !== undefined) process.exitCode = code;
