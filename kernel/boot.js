#!/usr/bin/env node
// The committed launcher: the TypeScript sources compile into dist/ on `npm install`
// (the `prepare` script). Kept as plain JS so `node kernel/boot.js` needs no loader.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Durable writes wait in libuv's thread pool for the disk (fdatasync, rename, the folder's
// fsync): 4 threads (libuv's default) left a server under 50 concurrent writers waiting on the
// pool; 16 let concurrent flushes share the journal's commits (issue #33, +14% durable PATCH).
// Read when the pool starts, at its first use: set here, before anything is loaded through it
// (Node 22 and later; Node 20 starts the pool while loading this file). An operator's own value wins.
process.env.UV_THREADPOOL_SIZE ??= '16';
// V8's compiled code of the modules a boot loads, kept on disk between runs (Node 22.1 and
// later; npm's own launcher does the same): a boot's module loading is most of its start-up
// before any entry is read (issue #33). NODE_DISABLE_COMPILE_CACHE=1 turns it off, and
// NODE_COMPILE_CACHE=<dir> moves it from the OS temp folder.
module.enableCompileCache?.();
const entry = fileURLToPath(new URL('../dist/kernel/main.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write('streams-kernel: dist/ is missing; run `npm install` or `npm run build` first.\n');
  process.exit(1);
}
const { main } = await import(pathToFileURL(entry).href);
await main(process.argv.slice(2));
