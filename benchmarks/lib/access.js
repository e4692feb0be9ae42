// Issue #28: what identities cost on the hot path. GET one entry (the get-one scenario's URLs)
// on three servers of the same data: without the access plugin (the reference), with it and
// no credentials (the anonymous role), and with it and a JWT (HS256; verified once, then kept
// by digest). Goal: the JWT run >= 0.8x the reference.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SignJWT } from 'jose';
import { generateFilebaseApp, productConfig } from './dataset.js';
import { cpuMsOf, startProduct } from './processes.js';
import { scenarios } from './scenarios.js';
import { summarize } from './stats.js';
import { runWrk } from './wrk.js';

const SECRET_ENV = 'BENCH_ACCESS_SECRET';
const SECRET = 'bench-only HMAC secret, at least thirty-two bytes long';
const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-');

/** The items stream gets no rules of its own: `access.default` lets the `reader` role (and the anonymous `public`) read it. */
function accessSection() {
  const read = { list: true, view: true };
  return { secret_env: SECRET_ENV, algorithms: ['HS256'], audience: 'bench', default: { reader: read, public: read } };
}

export async function benchAccess({ options, workDir, track, log }) {
  const count = options.sizes[0] ?? 10_000;
  const app = await generateFilebaseApp(path.join(workDir, `filebase-${count}`), count);
  // One server per data folder: the access server gets a copy of the same entries.
  const copy = await generateFilebaseApp(path.join(workDir, `filebase-${count}-access`), count);
  const accessConfig = path.join(copy.dir, 'config-access.json');
  await writeFile(accessConfig, JSON.stringify(productConfig({ access: accessSection() })));
  const env = { [SECRET_ENV]: SECRET };
  const token = await new SignJWT({ sub: 'bench-user', roles: ['reader'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience('bench')
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(SECRET));
  const request = scenarios(count).find((s) => s.id === 'get-one').product;
  const plain = track(await startProduct(app.config, { pin: options.pin }));
  const guarded = track(await startProduct(accessConfig, { pin: options.pin, env }));
  log(`[access] reference at ${plain.url}, access on at ${guarded.url} (${guarded.transport})`);
  const targets = [
    { name: 'no access plugin', url: plain.url, pid: plain.pid, authorization: undefined },
    { name: 'access, anonymous', url: guarded.url, pid: guarded.pid, authorization: undefined },
    { name: 'access, JWT', url: guarded.url, pid: guarded.pid, authorization: `Bearer ${token}` },
  ];
  // Every answer must be a 200 before anything is timed (a 401 is cheap and would flatter).
  for (const t of targets) {
    const res = await fetch(`${t.url}${request.path.replace('{n}', '1')}`, { headers: t.authorization ? { authorization: t.authorization } : {} });
    if (res.status !== 200) throw new Error(`access bench: ${t.name} answered ${res.status}`);
  }
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (const t of targets) await runWrk({ url: t.url, request: { ...request, authorization: t.authorization }, seconds: options.warmup, connections: options.connections, pin: options.pin });
  for (let round = 0; round < options.runs; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      // CPU time per answer too: on a shared machine it is the steadier figure of the two.
      const cpuBefore = cpuMsOf(t.pid);
      const result = await runWrk({ url: t.url, request: { ...request, authorization: t.authorization }, seconds: options.duration, connections: options.connections, pin: options.pin });
      const cpuAfter = cpuMsOf(t.pid);
      if (result.errors > 0) throw new Error(`access bench: ${t.name} had ${result.errors} errors`);
      result.cpuUsPerAnswer = cpuBefore !== null && cpuAfter !== null && result.requests > 0 ? ((cpuAfter - cpuBefore) * 1000) / result.requests : NaN;
      runs[t.name].push(result);
    }
  }
  await plain.stop();
  await guarded.stop();
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const rows = targets.map((t) => ({ name: t.name, ...summarize(runs[t.name]), cpuUsPerAnswer: median(runs[t.name].map((r) => r.cpuUsPerAnswer)) }));
  const reference = rows[0];
  for (const row of rows) {
    row.ratio = row.rps / reference.rps;
    // Answers per CPU second, relative: what the same core would serve.
    row.cpuRatio = reference.cpuUsPerAnswer / row.cpuUsPerAnswer;
  }
  const jwt = rows[2];
  return { count, transport: guarded.transport, rows, goal: { name: 'GET one with a JWT >= 0.8x without the access plugin', ratio: jwt.ratio, cpuRatio: jwt.cpuRatio, met: jwt.ratio >= 0.8 } };
}

export function accessTable(result) {
  if (!result) return '';
  const lines = [
    `### Access (issue #28): GET one entry, ${fmt(result.count)} entries, ${result.transport}`,
    '',
    '| server | req/s | p50 ms | p99 ms | req/s ratio | CPU µs per answer | per-CPU ratio |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...result.rows.map((r) => `| ${r.name} | ${fmt(r.rps)} | ${fmt(r.p50Ms, 2)} | ${fmt(r.p99Ms, 2)} | ${fmt(r.ratio, 2)} | ${fmt(r.cpuUsPerAnswer, 1)} | ${fmt(r.cpuRatio, 2)} |`),
    '',
    `Goal: ${result.goal.name}: ${fmt(result.goal.ratio, 2)} by req/s, ${fmt(result.goal.cpuRatio, 2)} by CPU time per answer (${result.goal.met ? 'met' : 'not met'} by req/s).`,
  ];
  return lines.join('\n');
}
