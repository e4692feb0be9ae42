// Issue #16: the product against a hand-written fastify 5 server over the same entries
// (benchmarks/servers/fastify-baseline.js), both pinned to CPU 0, wrk on CPU 1.
//  - a correctness guard first: for the same questions both must return the same ids in
//    the same order and the same total, else the ratio is not counted;
//  - the uncached filtered + sorted page: every request carries a filter value of its own
//    (wrk/rotate.lua vary mode), so neither the product's caches nor any other help;
//  - the cost of a new sort order (first request of an order never asked before);
//  - boot to the first servable entry, /readyz polled from the spawn (see readiness.js).
import path from 'node:path';
import { bootTimeout } from './bench-dataset.js';
import { CATEGORIES, STREAM_ID, generateFilebaseApp } from './dataset.js';
import { cpuMsOf, memoryOf, startBaseline, startProduct } from './processes.js';
import { bootToServable, warmPageCache } from './readiness.js';
import { median, ratio, summarize } from './stats.js';
import { runWrk } from './wrk.js';

const API = `/api/streams/${STREAM_ID}`;

/** One question, two spellings: category = {c}, price >= {d}, year desc (ties: id asc), page {p} of 20. */
export const UNCACHED = {
  label: 'uncached filtered + sorted page (category = {c}, price >= {d}, year desc, 20; every request its own price)',
  product: `${API}/entries?where[category]={c}&where[price]={d}&constraint[price]=%3E%3D&orderBy[year]=desc&per_page=20&page={p}`,
  baseline: `/${STREAM_ID}?category={c}&price_gte={d}&sort=year&order=desc&per_page=20&page={p}`,
  vary: { distinct: 100_000, choices: CATEGORIES, pages: 3 },
};

/** The concrete URL of request `i` (the same sequence as wrk/rotate.lua's vary mode). */
export function variant(template, vary, i) {
  const v = (i * 7919) % vary.distinct;
  const d = `${Math.floor(v / 100)}.${String(v % 100).padStart(2, '0')}`;
  const c = vary.choices[i % vary.choices.length];
  const p = String(1 + (Math.floor(i / vary.choices.length) % vary.pages));
  return template.replaceAll('{d}', d).replaceAll('{c}', c).replaceAll('{p}', p);
}

/** Sort orders asked once each after the runs (none was asked before in that process). */
const NEW_ORDERS = ['orderBy[title]=asc', 'orderBy[price]=desc', 'orderBy[year]=asc&orderBy[title]=desc', 'orderBy[available]=desc&orderBy[price]=asc'];

async function getJson(url) {
  const started = performance.now();
  const response = await fetch(url);
  const body = await response.json().catch(() => null);
  return { status: response.status, body, ms: performance.now() - started };
}

async function waitReady(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(`${url}/readyz`);
      await r.arrayBuffer();
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Same ids in the same order and the same total for the first `n` questions of the sequence. */
export async function guard(productUrl, baselineUrl, n = 24) {
  const mismatches = [];
  for (let i = 0; i < n; i++) {
    const a = await getJson(productUrl + variant(UNCACHED.product, UNCACHED.vary, i));
    const b = await getJson(baselineUrl + variant(UNCACHED.baseline, UNCACHED.vary, i));
    const ids = (r) => (Array.isArray(r.body?.data) ? r.body.data.map((e) => e.id) : null);
    const total = (r) => r.body?.meta?.total ?? r.body?.meta?.pagination?.total ?? null;
    const same = a.status === 200 && b.status === 200 && JSON.stringify(ids(a)) === JSON.stringify(ids(b)) && total(a) === total(b);
    if (!same) mismatches.push({ i, product: { status: a.status, ids: ids(a), total: total(a) }, baseline: { status: b.status, ids: ids(b), total: total(b) } });
  }
  return { checked: n, mismatches };
}

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : '-');

export async function benchBaseline({ options, workDir, track, log }) {
  const rows = [];
  for (const count of options.atScale) {
    const app = await generateFilebaseApp(path.join(workDir, `filebase-${count}`), count);
    if (!app.reused) log(`[baseline ${count}] generated ${count} entry files in ${(app.generatedMs / 1000).toFixed(1)} s`);
    const dataDir = path.join(app.dir, 'streams', 'data', STREAM_ID);
    const row = { count, boot: null, baselineBoot: null, minimalBoot: null, bootRatio: null, guard: null, uncached: null, sortOrders: [] };

    // Boot first, on a fresh process each (the product, then the baseline), both from a warm page cache.
    const warm = warmPageCache(dataDir);
    log(`[boot ${count}] page cache warmed: ${(warm.bytes / 2 ** 20).toFixed(0)} MB read in ${(warm.ms / 1000).toFixed(1)} s`);
    const productBoots = [await bootToServable({ app, count, pin: options.pin, track, log })];
    row.baselineBoot = await bootToServable({ app, count, pin: options.pin, track, log, baseline: dataDir });
    // Issue #33: the minimal loader (list, read, JSON.parse into a Map, listen) in the same harness.
    const minimalBoots = [await bootToServable({ app, count, pin: options.pin, track, log, baseline: dataDir, minimal: true })];
    // More pairs, in alternating order, without the RSS settle (measured once above): one boot of
    // each moved +-15% run to run on a shared VM, the ratio with it; the median of the pairs is kept.
    for (let pair = 1; pair < options.bootPairs; pair++) {
      const bootProduct = async () => productBoots.push(await bootToServable({ app, count, pin: options.pin, track, log, settle: false }));
      const bootMinimal = async () => minimalBoots.push(await bootToServable({ app, count, pin: options.pin, track, log, baseline: dataDir, minimal: true, settle: false }));
      for (const boot of pair % 2 ? [bootMinimal, bootProduct] : [bootProduct, bootMinimal]) await boot();
    }
    row.boot = { ...medianBoot(productBoots), rssSettledKb: productBoots[0].rssSettledKb, servableRuns: productBoots.map((b) => b.servableMs) };
    row.minimalBoot = { ...medianBoot(minimalBoots), rssSettledKb: minimalBoots[0].rssSettledKb, servableRuns: minimalBoots.map((b) => b.servableMs) };
    row.bootRatio = ratio(row.boot.servableMs, row.minimalBoot.servableMs);
    log(`[boot ${count}] product / minimal loader: ${fmt(row.bootRatio, 2)}x (median of ${productBoots.length}: ${fmt(row.boot.servableMs)} ms / ${fmt(row.minimalBoot.servableMs)} ms)`);

    const product = track(await startProduct(app.config, { pin: options.pin, timeoutMs: bootTimeout(count) }));
    const baseline = track(await startBaseline({ dataDir, pin: options.pin }));
    try {
      await waitReady(product.url, bootTimeout(count));
      await waitReady(baseline.url, bootTimeout(count));
      // A first entry from each, so a source that loads on first use is loaded before the runs.
      await getJson(`${product.url}${API}/entries/${count}`);
      row.rssKb = { product: memoryOf(product.pid)?.rssKb ?? null, baseline: memoryOf(baseline.pid)?.rssKb ?? null };
      row.guard = await guard(product.url, baseline.url);
      if (row.guard.mismatches.length) {
        log(`[baseline ${count}] GUARD FAILED: ${row.guard.mismatches.length}/${row.guard.checked} answers differ; first: ${JSON.stringify(row.guard.mismatches[0]).slice(0, 400)}`);
      } else {
        log(`[baseline ${count}] guard: ${row.guard.checked} questions, same ids in the same order and the same totals`);
      }
      const targets = [
        { name: 'product', server: product, request: { method: 'GET', path: UNCACHED.product, vary: UNCACHED.vary } },
        { name: 'baseline', server: baseline, request: { method: 'GET', path: UNCACHED.baseline, vary: UNCACHED.vary } },
      ];
      // At a million entries one uncached answer of either server can take most of a second:
      // longer runs and fewer connections, or a short run counts no completed request at all.
      const big = count >= 1_000_000;
      const connections = big ? Math.min(options.connections, 8) : options.connections;
      const seconds = big ? Math.max(options.duration, 10) : options.duration;
      const wrk = (t, s) => runWrk({ url: t.server.url, request: t.request, seconds: s, connections, pin: options.pin, timeoutS: 60 });
      for (const t of targets) await wrk(t, big ? Math.max(options.warmup, 3) : options.warmup);
      const runs = { product: [], baseline: [] };
      for (let round = 0; round < options.runs; round++) {
        for (const t of round % 2 ? [...targets].reverse() : targets) {
          const cpuBefore = cpuMsOf(t.server.pid);
          const result = await wrk(t, seconds);
          // CPU time per answer: what a request costs the server, steadier than req/s when
          // other work shares the machine (req/s also counts the time the core was taken away).
          result.cpuUsPerRequest = result.requests ? ((cpuMsOf(t.server.pid) - cpuBefore) * 1000) / result.requests : null;
          runs[t.name].push(result);
          log(`[baseline ${count}] uncached ${t.name.padEnd(8)} run ${round + 1}/${options.runs}: ${fmt(result.rps).padStart(6)} req/s  p50 ${fmt(result.p50Ms, 2)} ms  p99 ${fmt(result.p99Ms, 2)} ms${result.errors ? `  ERRORS ${result.errors}` : ''}`);
        }
      }
      const p = summarize(runs.product);
      const b = summarize(runs.baseline);
      const valid = row.guard.mismatches.length === 0 && p.errors === 0 && b.errors === 0;
      const pCpu = median(runs.product.map((r) => r.cpuUsPerRequest));
      const bCpu = median(runs.baseline.map((r) => r.cpuUsPerRequest));
      row.uncached = {
        label: UNCACHED.label,
        product: { ...p, cpuUsPerRequest: pCpu, runs: runs.product },
        baseline: { ...b, cpuUsPerRequest: bCpu, runs: runs.baseline },
        ratio: ratio(p.rps, b.rps),
        cpuRatio: ratio(bCpu, pCpu),
        valid,
      };
      log(`[baseline ${count}] uncached: product ${fmt(p.rps)} req/s (${fmt(pCpu)} µs CPU each), baseline ${fmt(b.rps)} req/s (${fmt(bCpu)} µs CPU each): ${fmt(row.uncached.ratio, 2)}x by req/s, ${fmt(row.uncached.cpuRatio, 2)}x by CPU per request${valid ? '' : ' (INVALID: guard or errors)'}`);

      // A new sort order: the first request of an order this process never saw (page 1),
      // then page 2 and a deep page of the same order.
      for (const order of NEW_ORDERS) {
        const first = await getJson(`${product.url}${API}/entries?${order}&per_page=20`);
        const second = await getJson(`${product.url}${API}/entries?${order}&per_page=20&page=2`);
        const deep = await getJson(`${product.url}${API}/entries?${order}&per_page=20&page=${Math.max(1, Math.floor(count / 40))}`);
        row.sortOrders.push({ order, firstMs: first.ms, secondMs: second.ms, deepMs: deep.ms, status: [first.status, second.status, deep.status] });
        log(`[baseline ${count}] new sort order ${order}: first page ${fmt(first.ms, 1)} ms, page 2 ${fmt(second.ms, 1)} ms, middle page ${fmt(deep.ms, 1)} ms`);
      }
      row.newOrderMs = median(row.sortOrders.map((s) => s.firstMs));
      row.newOrderMaxMs = Math.max(...row.sortOrders.map((s) => Math.max(s.firstMs, s.secondMs, s.deepMs)));
    } finally {
      await baseline.stop();
      await product.stop();
    }
    rows.push(row);
  }
  return rows;
}

export function baselineTable(results) {
  const rows = results.baseline ?? [];
  if (rows.length === 0) return '';
  const lines = [
    '| entries | guard | product req/s | p99 ms | fastify req/s | p99 ms | product / fastify (req/s; CPU per request) | new sort order: first page ms (median, max of any page) | boot to servable: product ms (CPU ms) | fastify ms (CPU ms) | minimal loader ms (CPU ms) | product / minimal loader | healthz during load | RSS MB at servable, then idle (product / fastify) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|',
  ];
  for (const r of rows) {
    const u = r.uncached;
    const guardText = r.guard ? (r.guard.mismatches.length ? `**${r.guard.mismatches.length} differ**` : `${r.guard.checked} same`) : '–';
    const boot = r.boot;
    const health = boot ? `${boot.healthzAnswered} answers, max ${fmt(boot.healthzMaxMs, 1)} ms` : '–';
    lines.push(
      `| ${fmt(r.count)} | ${guardText} | ${fmt(u?.product.rps)} | ${fmt(u?.product.p99Ms, 1)} | ${fmt(u?.baseline.rps)} | ${fmt(u?.baseline.p99Ms, 1)} | ${u?.ratio ? `${fmt(u.ratio, 2)}×; ${fmt(u.cpuRatio, 2)}×${u.valid ? '' : ' (invalid)'}` : '–'} | ${fmt(r.newOrderMs, 1)} (${fmt(r.newOrderMaxMs, 1)}) | ${fmt(boot?.servableMs)} (${fmt(boot?.cpuMs)})${boot?.honest === false ? ' (**ready before servable**)' : ''} | ${fmt(r.baselineBoot?.servableMs)} (${fmt(r.baselineBoot?.cpuMs)}) | ${fmt(r.minimalBoot?.servableMs)} (${fmt(r.minimalBoot?.cpuMs)}) | ${r.bootRatio ? `${fmt(r.bootRatio, 2)}×` : '–'} | ${health} | ${fmt((boot?.rssKb ?? NaN) / 1024, 0)}, ${fmt((boot?.rssSettledKb ?? NaN) / 1024, 0)} / ${fmt((r.baselineBoot?.rssKb ?? NaN) / 1024, 0)}, ${fmt((r.baselineBoot?.rssSettledKb ?? NaN) / 1024, 0)} |`,
    );
  }
  return lines.join('\n');
}

/** The boot whose time to servable is the median (an odd count; the lower middle otherwise), all its figures kept. */
function medianBoot(boots) {
  const sorted = [...boots].sort((a, b) => a.servableMs - b.servableMs);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
