import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The kernel's version, from its own package.json (two folders up from kernel/ in the
 * sources and from dist/kernel/ alike: `../../package.json` only in dist, so both are tried).
 */
export function kernelVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'streams-kernel' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not this one
    }
  }
  return '0.0.0';
}
