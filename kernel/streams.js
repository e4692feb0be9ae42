#!/usr/bin/env node
// The `streams` command (package.json "bin"): plain JS like boot.js, so it runs without a
// loader; the subcommands are compiled into dist/ by `npm install` (the `prepare` script).
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

// libuv's pool at 16 threads unless the environment says otherwise: why, and why here, in boot.js.
process.env.UV_THREADPOOL_SIZE ??= '16';
// The compile cache between runs: why, and how to turn it off, in boot.js.
module.enableCompileCache?.();
const entry = fileURLToPath(new URL('../dist/kernel/cli/index.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write('streams: dist/ is missing; run `npm install` or `npm run build` first.\n');
  process.exit(1);
}
const { run } = await import(pathToFileURL(entry).href);
const code = await run(process.argv.slice(2));
// serve keeps running (undefined); a tool ends with its code once its output is flushed.
if (code !== undefined) process.exitCode = code;
