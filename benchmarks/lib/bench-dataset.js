// One dataset's scenarios: boot the product, capture its answers, start the ceiling
// (same bytes) and json-server (same data), then for each scenario warm every server up
// and run product, ceiling and peer in turn, several times, alternating the order.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { markWritten } from './dataset.js';
import { answerSize, captureProduct, seedThroughApi } from './capture.js';
import { SERVER_CPU, busyShare, cpuTimes, memoryOf, startCeiling, startJsonServer, startProduct } from './processes.js';
import { expand, scenarios as scenarioList } from './scenarios.js';
import { sideBySide } from './side-by-side.js';
import { ratio, summarize } from './stats.js';
import { runWrk } from './wrk.js';

const fmt = (n, digits = 0) => (n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** Reset a process's peak RSS (VmHWM) so the next reading is this scenario's peak. */
async function resetPeak(pid) {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Scenarios also run on the node:http transport, beside the native one (same data, same URLs). */
const TRANSPORT_SCENARIOS = new Set(['get-one', 'list']);
/**
 * Scenarios also run side by side against their bare servers (lib/side-by-side.js), and the
 * pairs: the product against the bare uWS sending only the body, the product on node:http
 * against node:http's ceiling (or, without a native binary, the product against its ceiling).
 */
const SIDE_BY_SIDE_SCENARIOS = new Set(['get-one']);
const NATIVE_PAIRS = [['product', 'bare'], ['node', 'nodeCeiling']];
const NODE_ONLY_PAIRS = [['product', 'ceiling']];

/** Milliseconds a boot may take: generous, it grows with the entry count. */
export const bootTimeout = (count) => 60_000 + count * 2;

export async function benchDataset({ options, dataset, track, log }) {
  const { label, count, app, source } = dataset;
  const out = { id: label, source, count, generatedMs: dataset.generatedMs ?? null, scenarios: [], notes: [] };
  const product = track(await startProduct(app.config, { pin: options.pin, timeoutMs: bootTimeout(count) }));
  out.bootMs = product.bootMs;
  out.transport = product.transport;
  out.rssAfterBootKb = memoryOf(product.pid)?.rssKb ?? null;
  log(`[${label}] product listening after ${fmt(product.bootMs)} ms at ${product.url}, RSS ${fmt((out.rssAfterBootKb ?? NaN) / 1024, 1)} MB`);
  let ceiling = null;
  let peer = null;
  let nodeHttp = null;
  let bare = null;
  let nodeCeiling = null;
  try {
    if (source === 'mongodb') {
      const seeded = performance.now();
      await seedThroughApi(product.url, count);
      out.seededMs = performance.now() - seeded;
      log(`[${label}] seeded ${count} entries through POST in ${fmt(out.seededMs / 1000, 1)} s`);
    }
    const list = scenarioList(count).filter((s) => options.scenarios.includes(s.id));
    const { file, info } = await captureProduct(product.url, list, count);
    for (const [id, i] of Object.entries(info)) {
      if (!i.fromProduct) {
        const note = `${id}: the product answered ${i.productStatus || 'nothing'} while capturing, so the ceiling serves a synthetic envelope of ${i.bytes} bytes (not the product's bytes)`;
        out.notes.push(note);
        log(`[${label}] WARNING ${note}`);
      }
    }
    const captures = path.join(app.dir, 'ceiling-captures.json');
    await writeFile(captures, JSON.stringify(file));
    // The ceiling writes on the same filesystem as the product's entries. A product on node:http
    // (no native binary for this Node) is measured against a node:http ceiling.
    const native = product.transport !== 'node:http';
    const ceilingArgs = { captures, writeDir: path.join(app.dir, 'ceiling-writes'), pin: options.pin };
    ceiling = track(await startCeiling({ ...ceilingArgs, transport: native ? 'uws' : 'node' }));
    out.ceilingTransport = native ? 'uWebSockets.js' : 'node:http';
    const reads = list.filter((s) => TRANSPORT_SCENARIOS.has(s.id));
    // Issue #33: the stricter ceiling (only content-type and the body), and node:http's own.
    if (native && reads.length > 0) bare = track(await startCeiling({ ...ceilingArgs, bodyOnly: true }));
    if (native && reads.length > 0) nodeCeiling = track(await startCeiling({ ...ceilingArgs, transport: 'node' }));
    if (options.peer && app.db && list.some((s) => s.peer)) {
      peer = track(await startJsonServer({ db: app.db, pin: options.pin }));
      log(`[${label}] json-server 0.17.4 at ${peer.url}`);
    }
    // The same product on node:http, for the transport rows (skipped when the product
    // itself already runs on node:http: no native binary for this Node).
    if (product.transport !== 'node:http' && list.some((s) => TRANSPORT_SCENARIOS.has(s.id))) {
      nodeHttp = track(await startProduct(app.config, { pin: options.pin, timeoutMs: bootTimeout(count), transport: 'node', data: path.join(app.dir, 'node-http-data') }));
      log(`[${label}] product on node:http at ${nodeHttp.url}`);
    }
    if (source === 'filebase' && list.some((s) => s.ceiling === 'durable')) await markWritten(app.dir);
    for (const scenario of list) {
      const targets = [
        { name: 'product', server: product, request: scenario.product },
        { name: 'ceiling', server: ceiling, request: scenario.product },
      ];
      if (peer && scenario.peer) targets.push({ name: 'peer', server: peer, request: scenario.peer });
      if (TRANSPORT_SCENARIOS.has(scenario.id)) {
        if (bare) targets.push({ name: 'bare', server: bare, request: scenario.product });
        if (nodeHttp) targets.push({ name: 'node', server: nodeHttp, request: scenario.product });
        if (nodeCeiling) targets.push({ name: 'nodeCeiling', server: nodeCeiling, request: scenario.product });
      }
      // Side by side only where both servers share the one server core (pinned).
      const pairs = options.pin && SIDE_BY_SIDE_SCENARIOS.has(scenario.id) ? (native ? NATIVE_PAIRS : NODE_ONLY_PAIRS) : [];
      out.scenarios.push(await runScenario({ options, label, scenario, targets, pairs, info: info[scenario.id], log }));
    }
  } finally {
    for (const server of [nodeCeiling, bare, nodeHttp, peer, ceiling, product]) if (server) await server.stop();
  }
  return out;
}

/** The server core's busy share during side-by-side rounds (lib/side-by-side.js). */
const SERVER_CORE = { sample: () => cpuTimes(SERVER_CPU), share: busyShare };

async function runScenario({ options, label, scenario, targets, pairs, info, log }) {
  const wrk = (target, seconds) =>
    runWrk({ url: target.server.url, request: target.request, seconds, connections: options.connections, pin: options.pin });
  const peakReset = {};
  for (const t of targets) peakReset[t.name] = await resetPeak(t.server.pid);
  for (const t of targets) await wrk(t, options.warmup);
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 0; round < options.runs; round++) {
    // Alternate the order each round so a drift of the machine does not favour one server.
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      if (t.name === 'peer' && round >= (options.peerRuns ?? options.runs)) continue;
      const result = await wrk(t, options.duration);
      runs[t.name].push(result);
      log(
        `[${label}] ${scenario.id.padEnd(8)} ${t.name.padEnd(7)} run ${round + 1}/${options.runs}: ${fmt(result.rps).padStart(7)} req/s  p50 ${fmt(result.p50Ms, 2)} ms  p99 ${fmt(result.p99Ms, 2)} ms${result.errors ? `  ERRORS ${result.errors}` : ''}`,
      );
    }
  }
  const results = {};
  for (const t of targets) {
    const memory = memoryOf(t.server.pid);
    results[t.name] = {
      ...summarize(runs[t.name]),
      peakRssKb: memory?.hwmKb ?? null,
      peakIsScenario: peakReset[t.name],
      bytes: t.name === 'peer' ? ((await answerSize(t.server.url, expand(t.request)[0]))?.bytes ?? null) : info.bytes,
      runs: runs[t.name],
    };
  }
  const paired = {};
  for (const [a, b] of pairs) {
    const ta = targets.find((t) => t.name === a);
    const tb = targets.find((t) => t.name === b);
    if (ta && tb) paired[b] = await sideBySide({ a: ta, b: tb, rounds: options.runs, run: (t) => wrk(t, options.duration), log: (line) => log(`[${label}] ${scenario.id.padEnd(8)} ${line}`), core: SERVER_CORE });
  }
  const product = results.product.rps;
  // A ratio means something only when the product answered every request correctly and,
  // for a replay ceiling, the ceiling served the product's own bytes.
  const problems = [];
  if (results.product.errors > 0) problems.push(`the product answered ${results.product.errors} of ${results.product.requests} requests with an error`);
  if (scenario.ceiling === 'replay' && !info.fromProduct) problems.push('the ceiling served synthetic bytes');
  if (scenario.ceiling === 'durable' && !info.fromProduct) problems.push(`the product did not accept the write (status ${info.productStatus || 'none'})`);
  if (results.peer && results.peer.errors > 0) problems.push(`json-server answered ${results.peer.errors} requests with an error`);
  if (results.node && results.node.errors > 0) problems.push(`the product on node:http answered ${results.node.errors} requests with an error`);
  for (const p of Object.values(paired)) if (p.errors > 0) problems.push(`${p.a} answered ${p.errors} requests with an error side by side with ${p.b}`);
  return {
    valid: problems.length === 0,
    problems,
    id: scenario.id,
    label: scenario.label,
    ceilingKind: scenario.ceiling,
    sameBytes: scenario.ceiling === 'replay' ? info.fromProduct : null,
    productRequest: `${scenario.product.method} ${scenario.product.path}`,
    peerRequest: scenario.peer ? `${scenario.peer.method} ${scenario.peer.path}` : null,
    targets: results,
    ratios: {
      ceiling: ratio(product, results.ceiling?.rps),
      peer: ratio(product, results.peer?.rps),
      node: ratio(results.node?.rps, product),
      // Issue #33: against a bare uWS sending only the body, and the node:http product against node:http's ceiling.
      bare: ratio(product, results.bare?.rps),
      nodeCeiling: ratio(results.node?.rps, results.nodeCeiling?.rps),
      // Side by side (lib/side-by-side.js), by the bare server each pair ran against.
      sideBySide: Object.fromEntries(Object.entries(paired).map(([b, p]) => [b, p.ratio])),
    },
    sideBySide: paired,
  };
}
