import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as UwsModule from 'uws-pack';

/** The native module's surface we use (typed from uws-pack; the other candidate has the same API). */
export type Uws = typeof UwsModule;

export interface NativeUws {
  uws: Uws;
  /** `uWebSockets.js <package>@<version>`, for the boot line. */
  label: string;
}

export type UwsLoadResult = { ok: true; native: NativeUws } | { ok: false; reason: string };

/**
 * Where native uWebSockets.js binaries may come from: npm packages that ship them prebuilt
 * (nothing is downloaded or compiled at install). Tried in this order; the first whose
 * binary for this Node ABI loads and exposes a working App wins. uws-pack first: it is
 * the one the whole suite is run against on Debian 12; @btc-vision covers newer ABIs
 * (Node 24, 25) where glibc >= 2.38 is present. See docs/decisions.md (#12).
 */
const CANDIDATES: ReadonlyArray<{ name: string; binaryDir: string }> = [
  { name: 'uws-pack', binaryDir: 'dist/bin' },
  { name: '@btc-vision/uwebsockets.js', binaryDir: '.' },
];

const require = createRequire(import.meta.url);
let cached: UwsLoadResult | undefined;

/** Load the first working native uWebSockets.js, or explain per candidate why none did. Memoized. */
export function loadNativeUws(): UwsLoadResult {
  cached ??= tryCandidates();
  return cached;
}

function tryCandidates(): UwsLoadResult {
  const abi = process.versions.modules;
  const binary = `uws_${process.platform}_${process.arch}_${abi}.node`;
  const reasons: string[] = [];
  for (const candidate of CANDIDATES) {
    const folder = packageFolder(candidate.name);
    if (folder === null) {
      reasons.push(`${candidate.name} is not installed`);
      continue;
    }
    const file = path.join(folder, candidate.binaryDir, binary);
    if (!existsSync(file)) {
      reasons.push(`${candidate.name} has no ABI ${abi} for ${process.platform}-${process.arch}`);
      continue;
    }
    let uws: Uws;
    try {
      // The binary itself, not the package's wrapper: the wrappers only pick this same
      // file and replace the real reason (a missing GLIBC symbol) with a generic message.
      uws = require(file) as Uws;
    } catch (error) {
      reasons.push(`${candidate.name} ${shortReason(error)}`);
      continue;
    }
    if (typeof uws.App !== 'function' || typeof uws.us_listen_socket_close !== 'function') {
      reasons.push(`${candidate.name} loaded but does not expose App()`);
      continue;
    }
    return { ok: true, native: { uws, label: `uWebSockets.js ${candidate.name}@${packageVersion(folder)}` } };
  }
  return { ok: false, reason: `no native uWebSockets.js for Node ${process.version} (ABI ${abi}) on ${platformLabel()}: ${reasons.join('; ')}` };
}

function packageFolder(name: string): string | null {
  // Packages whose `exports` hide package.json cannot be require.resolve'd: walk the
  // node_modules folders Node would search instead.
  for (const dir of require.resolve.paths(name) ?? []) {
    const folder = path.join(dir, name);
    if (existsSync(path.join(folder, 'package.json'))) return folder;
  }
  return null;
}

function packageVersion(folder: string): string {
  try {
    return (JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}

function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const glibc = /`?(GLIBC_[0-9.]+)'? not found/.exec(message);
  if (glibc) return `needs ${glibc[1]}`;
  return `failed to load: ${message.split('\n')[0]!.slice(0, 160)}`;
}

function platformLabel(): string {
  const label = `${process.platform}-${process.arch}`;
  if (process.platform !== 'linux') return label;
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return header?.glibcVersionRuntime ? `${label} glibc ${header.glibcVersionRuntime}` : `${label} (not glibc)`;
}
