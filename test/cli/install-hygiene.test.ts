/**
 * Install hygiene and the Node versions (issue #32): the build never leaves dist/ missing,
 * no install-time telemetry, `engines` admits Node 22, 24 and 26 (and 20 while kept), the
 * addon recipe copies our range.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/server-process.js';

const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { engines: { node: string }; scarfSettings?: { enabled?: boolean }; scripts: Record<string, string>; bin: Record<string, string> };
/** `version` within a range of caret alternatives (`^20.19.0 || ^22.12.0`): what our `engines` is made of. */
function satisfies(version: string, range: string): boolean {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return range.split('||').some((alternative) => {
    const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(alternative.trim());
    if (!match) throw new Error(`not a caret range: ${alternative}`);
    const [m, n, p] = match.slice(1).map(Number) as [number, number, number];
    return major === m && (minor > n || (minor === n && patch >= p));
  });
}

describe('engines and the addon recipe', () => {
  it('admit Node 20.19, 22.12, 24 and 26, and nothing older', () => {
    for (const version of ['20.19.0', '22.12.0', '24.0.0', '26.0.0', '26.10.0']) expect(satisfies(version, pkg.engines.node), version).toBe(true);
    for (const version of ['18.20.0', '20.18.0', '22.11.0', '23.0.0', '25.0.0']) expect(satisfies(version, pkg.engines.node), version).toBe(false);
    expect(readFileSync(path.join(REPO, 'docs', 'addons.md'), 'utf8')).toContain(`"engines": { "node": "${pkg.engines.node}" }`);
    expect(readFileSync(path.join(REPO, '.ci', 'node-versions'), 'utf8')).toMatch(/^26\.\d+\.\d+$/m);
  });

  it('the streams command is the bin, and no dependency reports the install (scarf off)', () => {
    expect(pkg.bin).toEqual({ streams: 'kernel/streams.js' });
    expect(pkg.scarfSettings).toEqual({ enabled: false });
    expect(pkg.scripts.build).toBe('node kernel/build.js');
  });
});

describe('npm run build', () => {
  it('swaps a fresh tree in: the previous dist/ is there at every moment of the build, then replaced', async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'streams-build-'));
    const dist = path.join(work, 'dist');
    mkdirSync(path.join(dist, 'kernel'), { recursive: true });
    writeFileSync(path.join(dist, 'kernel', 'main.js'), '// the live build\n');
    try {
      const child = spawn(process.execPath, [path.join(REPO, 'kernel', 'build.js')], { env: { ...process.env, STREAMS_BUILD_OUT: dist }, stdio: ['ignore', 'pipe', 'pipe'] });
      // The swap is two renames (dist/ aside, the fresh tree in): a look may land between them,
      // and on a loaded machine (CI) one did. What must never happen is dist/ missing for two
      // looks in a row (2 ms apart), as it was for a whole compile before the swap.
      let gap = 0;
      let longestGap = 0;
      let looks = 0;
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      let done = false;
      void exited.then(() => (done = true));
      while (!done) {
        looks++;
        gap = existsSync(path.join(dist, 'kernel', 'main.js')) ? 0 : gap + 1;
        longestGap = Math.max(longestGap, gap);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      expect(await exited).toBe(0);
      expect(looks).toBeGreaterThan(100);
      expect(longestGap).toBeLessThan(2);
      // Bundled (kernel/bundle.js): the entry point exports `main`, its code may sit in a shared chunk.
      expect(readFileSync(path.join(dist, 'kernel', 'main.js'), 'utf8')).toMatch(/export async function main|export\s*\{[^}]*\bmain\b/);
      expect(existsSync(path.join(dist, 'kernel', 'cli', 'index.js'))).toBe(true);
      // The bundle's layout: every plugin's entry and the addon API where the plugin loader and
      // package.json's exports look; the rest in shared chunks; an inner module gone (a deep
      // import would load a second copy of it), its declarations kept for addons.
      for (const plugin of readdirSync(path.join(REPO, 'plugins')).filter((name) => existsSync(path.join(REPO, 'plugins', name, 'index.ts')))) {
        expect(existsSync(path.join(dist, 'plugins', plugin, 'index.js')), plugin).toBe(true);
      }
      expect(existsSync(path.join(dist, 'plugins', 'addon', 'testing.js'))).toBe(true);
      expect(readdirSync(path.join(dist, 'chunks')).some((name) => name.endsWith('.js'))).toBe(true);
      expect(existsSync(path.join(dist, 'plugins', 'http', 'uws-server.js'))).toBe(false);
      expect(existsSync(path.join(dist, 'plugins', 'http', 'uws-server.d.ts'))).toBe(true);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});
