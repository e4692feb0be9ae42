// Starting and stopping the servers under test. Every server runs in its own process,
// pinned to CPU 0 when taskset exists (wrk gets CPU 1), so load generator and server
// never fight for one core. Only processes started here are ever signalled, by pid.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const JSON_SERVER = path.join(REPO, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');
const CEILING = path.join(REPO, 'benchmarks', 'servers', 'ceiling.js');
const BASELINE = path.join(REPO, 'benchmarks', 'servers', 'fastify-baseline.js');
const MINIMAL_LOADER = path.join(REPO, 'benchmarks', 'servers', 'minimal-loader.js');

export const SERVER_CPU = '0';
export const LOAD_CPU = '1';

let tasksetChecked = null;
export function hasTaskset() {
  if (tasksetChecked === null) tasksetChecked = !spawnSync('taskset', ['-c', '0', 'true']).error;
  return tasksetChecked;
}

/** argv prefixed with `taskset -c <cpu>` when pinning is on and possible (taskset execs: same pid). */
export function pinned(cpu, argv, pin) {
  return pin && hasTaskset() ? ['taskset', '-c', cpu, ...argv] : argv;
}

/** VmRSS and VmHWM (peak RSS) of a live process, in KiB; null when it is gone. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Jiffies of one CPU so far, all and idle (idle + iowait), from /proc/stat; null where there is
 * none. Two readings give the share of the time between them the CPU was busy (`busyShare`).
 */
export function cpuTimes(cpu) {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${cpu} `));
    if (line === undefined) return null;
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is counted in user already).
    const total = fields.slice(0, 8).reduce((sum, v) => sum + v, 0);
    return { total, idle: fields[3] + fields[4] };
  } catch {
    return null;
  }
}

/** The share (0-1) of the time between two `cpuTimes` readings the CPU was busy; null when unknown. */
export function busyShare(before, after) {
  if (!before || !after || after.total <= before.total) return null;
  return 1 - (after.idle - before.idle) / (after.total - before.total);
}

/** CPU time (user + system) a live process has used so far, in ms; null when it is gone. */
export function cpuMsOf(pid) {
  try {
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ = 100 on Linux
  } catch {
    return null;
  }
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Keep the last bytes of a stream (for error messages) while always draining it. */
function tail(stream, limit = 8192) {
  let text = '';
  stream.on('data', (chunk) => {
    text += chunk.toString();
    if (text.length > limit * 2) text = text.slice(-limit);
  });
  return () => text.slice(-limit);
}

function waitExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
export async function stopChild(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (!(await waitExit(child, graceMs))) {
    child.kill('SIGKILL');
    await waitExit(child, 5_000);
  }
}

/** Spawn, then resolve once `pattern` matches stdout (the server's "I listen" line). */
function spawnUntil(argv, { cwd, env, pattern, timeoutMs, what }) {
  const started = performance.now();
  const child = spawn(argv[0], argv.slice(1), { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = tail(child.stderr);
  let out = '';
  let matched = false;
  return new Promise((resolve, reject) => {
    const fail = (message) => {
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      reject(new Error(`${what}: ${message}\nstdout: ${out.slice(-2000)}\nstderr: ${stderr()}`));
    };
    const timer = setTimeout(() => fail(`no listening line within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => {
      if (!matched) fail(`exited (${code ?? signal}) before listening`);
    });
    child.stdout.on('data', (chunk) => {
      if (matched) return; // keep draining: a full pipe would block a synchronous logger
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        matched = true;
        clearTimeout(timer);
        resolve({ child, match, readyMs: performance.now() - started, stderr, stop: () => stopChild(child), pid: child.pid });
      }
    });
  });
}

/** The product checkout under test (--product-root), this repository by default. */
let productRoot = REPO;
export function setProductRoot(dir) {
  productRoot = path.resolve(dir);
}
export function getProductRoot() {
  return productRoot;
}

/** Null when the product can boot, else what to do about it. */
export function productMissing() {
  if (!existsSync(path.join(productRoot, 'kernel', 'boot.js'))) return `${productRoot} has no kernel/boot.js`;
  if (!existsSync(path.join(productRoot, 'dist', 'kernel', 'main.js'))) return `${productRoot}/dist is missing: run \`npm install\` (or \`npm run build\`) first`;
  return null;
}

/** `node kernel/boot.js --config <file> --port 0`, URL read from its pino "listening" line. */
export async function startProduct(configFile, { pin, timeoutMs = 60_000, env = {}, transport = null, data = null }) {
  const missing = productMissing();
  if (missing) throw new Error(missing);
  const args = [process.execPath, path.join(productRoot, 'kernel', 'boot.js'), '--config', configFile, '--port', '0'];
  if (transport) args.push('--transport', transport);
  // A second product on the same app serves its own working copy: one server per data folder (#27).
  if (data) args.push('--data', data);
  const argv = pinned(SERVER_CPU, args, pin);
  const started = await spawnUntil(argv, { cwd: productRoot, env, pattern: /"url":"(http:\/\/[^"]+)"(?:,"transport":"([^"]+)")?/, timeoutMs, what: 'product (node kernel/boot.js)' });
  return { ...started, url: started.match[1].replace(/\/$/, ''), transport: started.match[2] ?? 'uWebSockets.js', bootMs: started.readyMs };
}

/**
 * A bare server replaying the product's captured answers (benchmarks/servers/ceiling.js):
 * on uWebSockets.js (`transport` 'uws') or node:http ('node'); `bodyOnly` sends only
 * `content-type` and the body.
 */
export async function startCeiling({ captures, writeDir, pin, transport = 'uws', bodyOnly = false }) {
  const args = [process.execPath, CEILING, '--captures', captures, '--dir', writeDir, '--transport', transport];
  if (bodyOnly) args.push('--body-only');
  const argv = pinned(SERVER_CPU, args, pin);
  const what = `ceiling server (${transport}${bodyOnly ? ', body only' : ''})`;
  const started = await spawnUntil(argv, { cwd: REPO, pattern: /"port":(\d+)/, timeoutMs: 30_000, what });
  return { ...started, url: `http://127.0.0.1:${started.match[1]}`, transport };
}

export function hasJsonServer() {
  return existsSync(JSON_SERVER);
}

/** json-server 0.17.4 on db.json, as a user would start it (defaults: cors and gzip middleware on). */
export async function startJsonServer({ db, pin, timeoutMs = 120_000 }) {
  const port = await freePort();
  const argv = pinned(SERVER_CPU, [process.execPath, JSON_SERVER, '--host', '127.0.0.1', '--port', String(port), '--quiet', db], pin);
  // --quiet prints nothing, so readiness is polled over HTTP instead of read from stdout.
  const child = spawn(argv[0], argv.slice(1), { cwd: path.dirname(db), stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = tail(child.stderr);
  tail(child.stdout);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`json-server exited (${child.exitCode}) before answering: ${stderr()}`);
    try {
      const response = await fetch(`${url}/items/1`);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`json-server did not answer within ${timeoutMs / 1000} s: ${stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, pid: child.pid, url, stderr, stop: () => stopChild(child) };
}

/**
 * Start the fastify baseline (or, `minimal`, the minimal loader of issue #33) on a free port;
 * resolves at once (loading may still run: poll /readyz).
 */
export async function startBaseline({ dataDir, pin, port, minimal = false }) {
  const chosen = port ?? (await freePort());
  const argv = pinned(SERVER_CPU, [process.execPath, minimal ? MINIMAL_LOADER : BASELINE, '--data', dataDir, '--port', String(chosen)], pin);
  const child = spawn(argv[0], argv.slice(1), { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  child.stdout.resume();
  const stop = () => stopChild(child, 10_000);
  return { child, pid: child.pid, url: `http://127.0.0.1:${chosen}`, stop, stderr: () => err };
}

