#!/usr/bin/env node
// The committed launcher: the TypeScript sources compile into dist/ on `npm install`
// (the `prepare` script). Kept as plain JS so `node kernel/boot.js` needs no loader.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const entry = fileURLToPath(new URL('../dist/kernel/main.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write('streams-kernel: dist/ is missing; run `npm install` or `npm run build` first.\n');
  process.exit(1);
}
const { main } = await import(pathToFileURL(entry).href);
await main(process.argv.slice(2));
