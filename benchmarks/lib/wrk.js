// Running wrk (a separate C process, pinned to CPU 1) and reading its results.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { LOAD_CPU, REPO, pinned } from './processes.js';

const SCRIPT = path.join(REPO, 'benchmarks', 'wrk', 'rotate.lua');

export const WRK_MISSING = `wrk is not installed. Install it, then run again:
  Debian/Ubuntu: sudo apt-get install wrk
  Fedora:        sudo dnf install wrk
  macOS:         brew install wrk`;

export function wrkVersion() {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (probe.error) return null;
  return /wrk\s+(\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1] ?? 'unknown';
}

const UNIT = { us: 1, ms: 1000, s: 1_000_000 };

/** Fallback reader of wrk's text report (--latency), used only if the Lua summary is absent. */
export function parseWrkText(text) {
  const pct = (p) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(text);
    return m ? Number(m[1]) * UNIT[m[2]] : NaN;
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const total = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const errors = non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return { rps, requests: total, p50Ms: pct(50) / 1000, p99Ms: pct(99) / 1000, errors, non2xx };
}

export function parseWrkOutput(text) {
  const line = /^WRKJSON (\{.*\})$/m.exec(text);
  if (!line) return parseWrkText(text);
  const s = JSON.parse(line[1]);
  return {
    rps: s.requests / (s.duration_us / 1e6),
    requests: s.requests,
    p50Ms: s.p50_us / 1000,
    p99Ms: s.p99_us / 1000,
    meanMs: s.mean_us / 1000,
    maxMs: s.max_us / 1000,
    bytesPerResponse: s.requests ? s.bytes / s.requests : 0,
    errors: s.connect + s.read + s.write + s.status + s.timeout,
    non2xx: s.status,
  };
}

/**
 * One wrk run. `request` = { method, path (with {n}), body (with {n}) | null, count, start, step },
 * or { method, path (with {d} {c} {p}), vary: { distinct, choices, pages } } (see wrk/rotate.lua).
 * One thread (one core is wrk's), `connections` keep-alive connections, --latency.
 */
export function runWrk({ url, request, seconds, connections, pin, timeoutS = 10 }) {
  const args = [
    'wrk', '-t1', `-c${connections}`, `-d${Math.max(1, Math.round(seconds))}s`, `--timeout`, `${timeoutS}s`, '--latency',
    '-s', SCRIPT, url, '--',
    request.method, request.path, request.body ?? '-',
    ...(request.vary
      ? ['vary', String(request.vary.distinct), request.vary.choices.join(','), String(request.vary.pages)]
      : [String(request.count ?? 1), String(request.start ?? 1), String(request.step ?? 1)]),
  ];
  const argv = pinned(LOAD_CPU, args, pin);
  return new Promise((resolve, reject) => {
    const env = request.authorization ? { ...process.env, WRK_AUTHORIZATION: request.authorization } : { ...process.env, WRK_AUTHORIZATION: '' };
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`wrk exited ${code}: ${err || out}`));
      else resolve(parseWrkOutput(out));
    });
  });
}
