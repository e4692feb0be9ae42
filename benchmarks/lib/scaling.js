// Scaling: boot time and memory against the entry count, and the latency of one
// filtered, sorted list page (one connection: service time, no queueing) against it.
import path from 'node:path';
import { bootTimeout } from './bench-dataset.js';
import { generateFilebaseApp } from './dataset.js';
import { memoryOf, startProduct } from './processes.js';
import { expand, scenarios } from './scenarios.js';
import { median } from './stats.js';
import { runWrk } from './wrk.js';

export async function benchScaling({ options, workDir, track, log }) {
  const rows = [];
  for (const count of options.scaling) {
    const app = await generateFilebaseApp(path.join(workDir, `filebase-${count}`), count);
    if (!app.reused) log(`[scaling ${count}] generated ${count} entry files in ${(app.generatedMs / 1000).toFixed(1)} s`);
    const boots = [];
    let memory = null;
    let filter = null;
    for (let b = 0; b < options.boots; b++) {
      const product = track(await startProduct(app.config, { pin: options.pin, timeoutMs: bootTimeout(count) }));
      try {
        // "listening" may come before the entries are loaded (a source may load on first
        // use), so boot time also counts until the first entry is served.
        const asked = performance.now();
        const first = await fetch(`${product.url}/api/streams/items/entries/${count}`);
        await first.arrayBuffer();
        boots.push({ listeningMs: product.bootMs, firstAnswerMs: product.bootMs + (performance.now() - asked), status: first.status });
        memory = memoryOf(product.pid);
        const last = b === options.boots - 1;
        if (last && count <= options.scalingFilterMax) {
          const filtered = scenarios(count).find((s) => s.id === 'filtered').product;
          const probe = await fetch(`${product.url}${expand(filtered)[0].path}`);
          await probe.arrayBuffer();
          const ok = probe.status === 200;
          await runWrk({ url: product.url, request: filtered, seconds: options.warmup, connections: 1, pin: options.pin });
          const run = await runWrk({ url: product.url, request: filtered, seconds: options.duration, connections: 1, pin: options.pin });
          filter = { p50Ms: run.p50Ms, p99Ms: run.p99Ms, rps: run.rps, errors: run.errors, status: probe.status, ok };
        }
      } finally {
        await product.stop();
      }
    }
    const row = {
      count,
      generatedMs: app.reused ? null : app.generatedMs,
      bootMs: median(boots.map((b) => b.firstAnswerMs)),
      listeningMs: median(boots.map((b) => b.listeningMs)),
      firstStatus: boots.at(-1)?.status ?? null,
      boots,
      rssKb: memory?.rssKb ?? null,
      hwmKb: memory?.hwmKb ?? null,
      filter,
    };
    rows.push(row);
    log(
      `[scaling ${count}] listening after ${Math.round(row.listeningMs)} ms, first entry served after ${Math.round(row.bootMs)} ms${row.firstStatus === 200 ? '' : ` (status ${row.firstStatus})`}, RSS ${((row.rssKb ?? NaN) / 1024).toFixed(1)} MB` +
        (filter ? `, filtered page p50 ${filter.p50Ms.toFixed(2)} ms p99 ${filter.p99Ms.toFixed(2)} ms${filter.ok ? '' : ` (status ${filter.status})`}` : ', filter latency skipped in this mode'),
    );
  }
  return rows;
}
