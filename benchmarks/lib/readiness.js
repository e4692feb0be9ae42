// Boot to the first servable entry, measured from the spawn with /readyz polled every 10 ms
// (issue #16): the first 200 of /readyz must come with servable entries, so right after it
// the last entry is asked; its answer time is the boot time. /healthz is polled beside it
// (every 50 ms once the port answers) to show whether the event loop stays free while
// entries load.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { STREAM_ID } from './dataset.js';
import { SERVER_CPU, cpuMsOf, freePort, getProductRoot, memoryOf, pinned, startBaseline, stopChild } from './processes.js';
import { bootTimeout } from './bench-dataset.js';

/**
 * Read every file of a folder once, so both servers boot from a warm page cache. Without it
 * the first server booted pays the disk reads and the second finds the files cached (the
 * product booted first and looked 2-3x slower than its CPU time on a busy machine).
 */
export function warmPageCache(folder) {
  const started = performance.now();
  let bytes = 0;
  for (const name of readdirSync(folder)) bytes += readFileSync(path.join(folder, name)).length;
  return { ms: performance.now() - started, bytes };
}

/** An entry answered later than this after /readyz said 200 means readiness came before the entries. */
const HONEST_GAP_MS = 100;
/** Idle time before the second RSS reading. */
const SETTLE_MS = 5000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed(url) {
  const started = performance.now();
  try {
    const response = await fetch(url);
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

function spawnProduct(config, port, pin) {
  const root = getProductRoot();
  const argv = pinned(SERVER_CPU, [process.execPath, path.join(root, 'kernel', 'boot.js'), '--config', config, '--port', String(port)], pin);
  const child = spawn(argv[0], argv.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.resume();
  const stop = () => stopChild(child);
  return { child, pid: child.pid, url: `http://127.0.0.1:${port}`, stop };
}

/**
 * Boot once (the product, or with `baseline` = data folder the fastify baseline) and time:
 * listening line (product), first /readyz 200, and the last entry served right after it.
 */
export async function bootToServable({ app, count, pin, track, log, baseline = null, minimal = false, settle = true }) {
  const port = await freePort();
  const started = performance.now();
  const server = track(baseline ? await startBaseline({ dataDir: baseline, pin, port, minimal }) : spawnProduct(app.config, port, pin));
  const who = baseline ? (minimal ? 'minimal loader' : 'fastify') : 'product';
  let listeningMs = null;
  let readyLogMs = null;
  let out = '';
  server.child.stdout.on('data', (chunk) => {
    out += chunk.toString();
    if (out.length > 65536) out = out.slice(-16384);
    if (listeningMs === null && /"url":"http|"port":\d+/.test(out)) listeningMs = performance.now() - started;
    if (readyLogMs === null && /"msg":"[^"]*\bready\b/i.test(out)) readyLogMs = performance.now() - started;
  });
  const result = { who, count, listeningMs: null, readyMs: null, servableMs: null, entryStatus: null, honest: null, healthzAnswered: 0, healthzMaxMs: null, readyLogMs: null, rssKb: null, rssSettledKb: null, cpuMs: null, progressLines: 0 };
  let ready = false;
  const health = (async () => {
    while (!ready) {
      const h = await timed(`${server.url}/healthz`);
      if (h.status === 200) {
        result.healthzAnswered++;
        result.healthzMaxMs = Math.max(result.healthzMaxMs ?? 0, h.ms);
      }
      await sleep(50);
    }
  })();
  try {
    const deadline = performance.now() + bootTimeout(count);
    for (;;) {
      const r = await timed(`${server.url}/readyz`);
      if (r.status === 200) break;
      if (server.child.exitCode !== null) throw new Error(`${who} exited (${server.child.exitCode}) while booting`);
      if (performance.now() > deadline) throw new Error(`${who}: /readyz not 200 within ${bootTimeout(count) / 1000} s`);
      await sleep(10);
    }
    result.readyMs = performance.now() - started;
    const entry = await timed(`${server.url}${baseline ? `/${STREAM_ID}/${count}` : `/api/streams/${STREAM_ID}/entries/${count}`}`);
    result.servableMs = performance.now() - started;
    result.entryStatus = entry.status;
    result.honest = entry.status === 200 && result.servableMs - result.readyMs < HONEST_GAP_MS;
    result.rssKb = memoryOf(server.pid)?.rssKb ?? null;
    // CPU time used until servable: steadier than wall time on a machine shared with other work.
    result.cpuMs = cpuMsOf(server.pid);
    // RSS right after a load still holds the load's garbage (V8 returns pages after its next
    // full collection): read it again once the node has been idle for a few seconds.
    if (settle) {
      await sleep(SETTLE_MS);
      result.rssSettledKb = memoryOf(server.pid)?.rssKb ?? null;
    }
  } finally {
    ready = true;
    await health;
    await server.stop();
  }
  result.listeningMs = listeningMs;
  result.readyLogMs = readyLogMs;
  result.progressLines = (out.match(/"msg":"[^"]*loading/gi) ?? []).length;
  log(
    `[boot ${count}] ${who}: listening ${Math.round(listeningMs ?? NaN)} ms, /readyz 200 at ${Math.round(result.readyMs)} ms, entry ${count} served at ${Math.round(result.servableMs)} ms (status ${result.entryStatus})` +
      `${result.honest ? '' : ' READY BEFORE SERVABLE'}; /healthz answered ${result.healthzAnswered} times while booting (max ${(result.healthzMaxMs ?? NaN).toFixed(1)} ms); RSS ${((result.rssKb ?? NaN) / 1024).toFixed(1)} MB${settle ? ` (${((result.rssSettledKb ?? NaN) / 1024).toFixed(1)} MB after ${SETTLE_MS / 1000} s idle)` : ''}; CPU used ${Math.round(result.cpuMs ?? NaN)} ms`,
  );
  return result;
}
