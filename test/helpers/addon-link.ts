import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, which the link below points at. */
const repo = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The example addon's folder (plugins/addon-geo). */
export const GEO_ADDON_DIR = path.join(repo, 'plugins', 'addon-geo');

/**
 * Make the example addon importable from this checkout. The addon imports
 * `streams-kernel/addon`; its own package.json is the nearest one, so Node cannot
 * self-reference the kernel package from there. Like an author with a local kernel checkout
 * (`npm link`), the addon folder gets `node_modules/streams-kernel` -> the repository root,
 * which resolves through package.json `exports` to dist/ (built by `npm install`/`npm ci`).
 *
 * Every suite that imports the addon calls this first: a suite run alone (or first) on a
 * clean clone must not depend on another suite having made the link. Suites run in parallel
 * workers, so a link made meanwhile by another one is fine.
 */
export function linkKernelForAddon(addonDir: string = GEO_ADDON_DIR): void {
  if (!existsSync(path.join(repo, 'dist', 'plugins', 'addon', 'index.js'))) {
    throw new Error('dist/ has no addon API: run `npx tsc -p tsconfig.build.json` (npm install/ci does it) first.');
  }
  const link = path.join(addonDir, 'node_modules', 'streams-kernel');
  if (existsSync(path.join(link, 'package.json'))) return;
  mkdirSync(path.dirname(link), { recursive: true });
  try {
    symlinkSync(path.relative(path.dirname(link), repo), link, 'dir');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !existsSync(path.join(link, 'package.json'))) throw error;
  }
}
