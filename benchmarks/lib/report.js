// Results: one JSON (everything, including every run) and one Markdown page per run,
// the scaling chart as SVG, and the latest summary table kept in benchmarks/README.md.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { scalingSvg } from './chart.js';
import { realtimeTable } from './realtime.js';
import { baselineTable } from './baseline.js';

const num = (n, digits = 0) => (n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const mb = (kb) => (Number.isFinite(kb) ? num(kb / 1024, 1) : '–');
const times = (r) => (r === null || r === undefined ? '–' : `${num(r, r < 10 ? 2 : 1)}×`);

function find(results, source, count, scenario) {
  const dataset = results.datasets.find((d) => d.source === source && (count === undefined || d.count === count));
  return dataset?.scenarios.find((s) => s.id === scenario) ?? null;
}

/** The issue's goals, measured (never asserted): value, target, met, and where it came from. */
export function goals(results) {
  const out = [];
  const first = results.datasets.find((d) => d.source === 'filebase')?.count;
  const getOne = find(results, 'filebase', first, 'get-one');
  const filtered = find(results, 'filebase', first, 'filtered');
  const create = find(results, 'filebase', first, 'create');
  const patch = find(results, 'filebase', first, 'patch');
  const list = find(results, 'filebase', first, 'list');
  const dataset = results.datasets.find((d) => d.source === 'filebase' && d.count === first);
  const onNode = dataset?.transport === 'node:http';
  // A figure from a run where the product answered errors is shown but never called met.
  const add = (goal, value, target, higher, where, unit = '×', valid = true) =>
    out.push({
      goal,
      target,
      value,
      unit,
      higher,
      met: value === null || value === undefined || !valid ? null : higher ? value >= target : value < target || (unit === '×' && value === target),
      where: valid ? where : `${where}; INVALID: product errors or synthetic bytes`,
    });
  const at = `filebase ${first ?? '?'} entries`;
  add(`GET one vs bare ${onNode ? 'node:http' : 'uWS'} (same bytes)`, getOne?.ratios.ceiling ?? null, 0.85, true, at, '×', getOne?.valid);
  // Issue #33: a stricter ceiling (a bare uWS sending only content-type and the body), and the
  // node:http transport against node:http's own ceiling (the product itself when it runs on it).
  if (getOne?.ratios.bare) add('GET one vs bare uWS sending only the body', getOne.ratios.bare, 0.85, true, at, '×', getOne.valid);
  if (getOne?.ratios.nodeCeiling) add('GET one on node:http vs bare node:http (same bytes)', getOne.ratios.nodeCeiling, 0.85, true, at, '×', getOne.valid);
  if (list?.ratios.nodeCeiling) add('list page on node:http vs bare node:http (same bytes)', list.ratios.nodeCeiling, 0.85, true, at, '×', list.valid);
  // The same ratios side by side (lib/side-by-side.js): both servers loaded at once on one core,
  // the median of the rounds' ratios (the spread of the rounds beside it).
  const paired = getOne?.sideBySide ?? {};
  // The server core's busy share tells whether the rounds measured the servers alone (lib/side-by-side.js).
  const busy = (p) => (Number.isFinite(p.serverBusy) ? `, server core busy ${Math.round(p.serverBusy * 100)}%` : '');
  const spread = (p) => `${at}, side by side: median of ${p.rounds.length} rounds (${num(p.low, 2)}-${num(p.high, 2)})${busy(p)}`;
  if (paired.bare) add('GET one vs bare uWS sending only the body, side by side', paired.bare.ratio, 0.85, true, spread(paired.bare), '×', getOne.valid);
  if (paired.nodeCeiling) add('GET one on node:http vs bare node:http (same bytes), side by side', paired.nodeCeiling.ratio, 0.85, true, spread(paired.nodeCeiling), '×', getOne.valid);
  if (paired.ceiling) add('GET one vs bare node:http (same bytes), side by side', paired.ceiling.ratio, 0.85, true, spread(paired.ceiling), '×', getOne.valid);
  add('GET one vs json-server', getOne?.ratios.peer ?? null, 15, true, at, '×', getOne?.valid);
  add('filtered list vs json-server', filtered?.ratios.peer ?? null, 30, true, at, '×', filtered?.valid);
  // Issue #33: group commit puts durable writes at or past a bare per-request fsync server.
  add('durable create vs bare fsync ceiling', create?.ratios.ceiling ?? null, 1, true, `${at}, ${results.meta.connections} clients`, '×', create?.valid);
  add('durable PATCH vs bare fsync ceiling', patch?.ratios.ceiling ?? null, 1, true, `${at}, ${results.meta.connections} clients`, '×', patch?.valid);
  const loaded = find(results, 'filebase', 100_000, 'filtered');
  const scaled = results.scaling.find((r) => r.count === 100_000 && r.filter);
  if (loaded) add('p99 filtered + sorted page, 100k entries', loaded.targets.product.p99Ms, 10, false, `${results.meta.connections} clients`, 'ms', loaded.valid);
  if (scaled) add('p99 filtered + sorted page, 100k entries', scaled.filter.p99Ms, 10, false, '1 client (scaling)', 'ms', scaled.filter.ok && !scaled.filter.errors);
  if (!loaded && !scaled) add('p99 filtered + sorted page, 100k entries', null, 10, false, 'not measured in this mode (run --full)', 'ms');
  // Issue #16, against the hand-written fastify baseline (lib/baseline.js).
  for (const r of results.baseline ?? []) {
    const size = r.count >= 1_000_000 ? '1M' : r.count >= 100_000 ? `${r.count / 1000}k` : String(r.count);
    const big = r.count >= 1_000_000;
    if (r.uncached) add(`uncached filtered + sorted page vs fastify, ${size}`, r.uncached.ratio, big ? 1 : 2, true, `every request its own filter value; guard ${r.guard?.mismatches.length ? 'FAILED' : 'passed'}`, '×', r.uncached.valid);
    if (r.bootRatio) add(`boot to first servable entry vs the minimal loader, ${size}`, r.bootRatio, 1, false, `${Math.round(r.boot.servableMs)} ms / ${Math.round(r.minimalBoot.servableMs)} ms${r.boot.honest ? '' : ', READY BEFORE SERVABLE'}`, '×', r.boot.entryStatus === 200 && r.boot.honest);
    if (r.boot) add(`boot to first servable entry (/readyz from spawn), ${size}`, r.boot.servableMs, big ? 10_000 : 1_500, false, `readyz 200 at ${Math.round(r.boot.readyMs)} ms${r.boot.honest ? '' : ', READY BEFORE SERVABLE'}`, 'ms', r.boot.entryStatus === 200);
    if (!big && Number.isFinite(r.newOrderMs)) add(`new sort order (first page), ${size}`, r.newOrderMs, 50, false, `median of ${r.sortOrders.length} orders; slowest page of any ${Math.round(r.newOrderMaxMs)} ms`, 'ms');
  }
  // Issue #26: realtime under load (lib/realtime.js).
  const levels = Array.isArray(results.realtime) ? results.realtime : results.realtime?.levels ?? [];
  const top = levels.find((r) => r.subscribers >= 10_000);
  if (top) add('p99 change-to-subscriber, 10,000 subscribers', top.p99Ms, 100, false, `${top.changes} changes`, 'ms', !top.missing);
  const idle = [...levels].reverse().find((r) => r.rssPerSubscriberBytes !== null && r.rssPerSubscriberBytes !== undefined);
  if (idle) add('RSS per idle WebSocket subscriber', idle.rssPerSubscriberBytes / 1024, 10, false, `${idle.subscribers.toLocaleString('en-US')} subscribers`, 'KiB');
  const large = results.realtime?.large;
  if (large) add(`1 MB write answered, ${large.subscribers.toLocaleString('en-US')} subscribers (p99)`, large.with.p99Ms, 50, false, `${large.writes} writes; ${large.without.p99Ms.toFixed(1)} ms without subscribers`, 'ms', !large.missing);
  return out;
}

/** The transport rows: each scenario run on both transports of the product, side by side. */
function transportTable(results) {
  const lines = [
    '| dataset | scenario | transport | req/s | p50 ms | p99 ms | errors | vs native | bare server req/s | vs bare server |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const d of results.datasets) {
    for (const s of d.scenarios) {
      const n = s.targets.node;
      const p = s.targets.product;
      if (n) {
        const b = s.targets.bare;
        lines.push(`| ${d.id} | ${s.label} | ${d.transport ?? 'uWebSockets.js'} | ${num(p.rps)} | ${num(p.p50Ms, 2)} | ${num(p.p99Ms, 2)} | ${num(p.errors)} | 1.00× | ${b ? `${num(b.rps)} (uWS, body only)` : '–'} | ${times(s.ratios.bare)} |`);
        const c = s.targets.nodeCeiling;
        lines.push(`| ${d.id} | ${s.label} | node:http | ${num(n.rps)} | ${num(n.p50Ms, 2)} | ${num(n.p99Ms, 2)} | ${num(n.errors)} | ${times(s.ratios.node)} | ${c ? `${num(c.rps)} (node:http, same bytes)` : '–'} | ${times(s.ratios.nodeCeiling)} |`);
      } else if (d.transport === 'node:http' && (s.id === 'get-one' || s.id === 'list')) {
        // No native binary for this Node: the product runs on node:http and its ceiling is node:http's.
        lines.push(`| ${d.id} | ${s.label} | node:http | ${num(p.rps)} | ${num(p.p50Ms, 2)} | ${num(p.p99Ms, 2)} | ${num(p.errors)} | – | ${num(s.targets.ceiling?.rps)} (node:http, same bytes) | ${times(s.ratios.ceiling)} |`);
      }
    }
  }
  return lines.length > 2 ? lines.join('\n') : '';
}

function summaryTable(results) {
  const lines = [
    '| dataset | scenario | product req/s | p50 ms | p99 ms | errors | peak RSS MB | ceiling req/s | product / ceiling | json-server req/s | product / json-server | bytes (product / peer) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const d of results.datasets) {
    for (const s of d.scenarios) {
      const p = s.targets.product;
      const c = s.targets.ceiling;
      const j = s.targets.peer;
      lines.push(
        `| ${d.id} | ${s.label}${s.valid ? '' : ' ⚠ invalid, see notes'} | ${num(p.rps)} | ${num(p.p50Ms, 2)} | ${num(p.p99Ms, 2)} | ${num(p.errors)} | ${mb(p.peakRssKb)} | ${num(c?.rps)}${s.ceilingKind === 'durable' ? ' (fsync)' : ''}${d.ceilingTransport === 'node:http' ? ' (node:http)' : ''} | ${times(s.ratios.ceiling)} | ${num(j?.rps)} | ${times(s.ratios.peer)} | ${num(p.bytes)} / ${j ? num(j.bytes) : '–'} |`,
      );
    }
  }
  return lines.join('\n');
}

function goalsTable(results) {
  const lines = ['| goal | target | measured | met | where |', '|---|---:|---:|:---:|---|'];
  for (const g of goals(results)) {
    // Ratios are goals from below (≥); times and sizes (ms, KiB) from above (<).
    const target = g.unit === '×' ? `${g.higher ? '≥' : '≤'} ${g.target}×` : `< ${g.target} ${g.unit}`;
    const value = g.value === null ? '–' : g.unit === '×' ? times(g.value) : `${num(g.value, 2)} ${g.unit}`;
    lines.push(`| ${g.goal} | ${target} | ${value} | ${g.met === null ? 'not measured' : g.met ? 'yes' : '**no**'} | ${g.where} |`);
  }
  return lines.join('\n');
}

function scalingTable(results) {
  const lines = [
    '| entries | generate s | listening ms | first entry served ms | RSS then MB | peak RSS MB | filtered page p50 ms (1 client) | p99 ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results.scaling) {
    lines.push(`| ${num(r.count)} | ${r.generatedMs === null ? 'reused' : num(r.generatedMs / 1000, 1)} | ${num(r.listeningMs)} | ${num(r.bootMs)}${r.firstStatus === 200 ? '' : ` (status ${r.firstStatus})`} | ${mb(r.rssKb)} | ${mb(r.hwmKb)} | ${r.filter ? num(r.filter.p50Ms, 2) : 'skipped'} | ${r.filter ? num(r.filter.p99Ms, 2) : 'skipped'} |`);
  }
  return lines.join('\n');
}

function metaLines(results) {
  const m = results.meta;
  return [
    `- ${m.date} · mode \`${m.mode}\` · commit \`${m.commit}\` · ${m.durationS ? `${Math.round(m.durationS)} s` : ''}`,
    `- machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.os}; Node ${m.node}; wrk ${m.wrk}; filesystem of the data: ${m.filesystem}`,
    `- method: ${m.warmup} s warm-up per server and scenario, then ${m.runs} interleaved runs × ${m.duration} s (order alternating${m.peerRuns !== undefined && m.peerRuns < m.runs ? `; json-server ${m.peerRuns} of them` : ''}), medians; ${m.connections} connections, 1 wrk thread; ${m.pinned ? 'servers pinned to CPU 0 and wrk to CPU 1 with taskset; GET one also side by side against its bare servers (both loaded at once, sharing CPU 0: the median of the rounds\' ratios)' : 'not pinned (no taskset or --no-pin), so nothing side by side'}`,
  ].join('\n');
}

export function markdown(results, svgName) {
  const notes = results.datasets.flatMap((d) => [
    ...d.notes.map((n) => `- ${d.id}: ${n}`),
    ...d.scenarios.filter((s) => !s.valid).map((s) => `- ${d.id} ${s.id}: ratio not meaningful: ${s.problems.join('; ')}`),
  ]);
  const boots = results.datasets.map((d) => `- ${d.id}: listening after ${num(d.bootMs)} ms, RSS then ${mb(d.rssAfterBootKb)} MB${d.seededMs ? `, seeded through POST in ${num(d.seededMs / 1000, 1)} s` : ''}`);
  return `# Benchmark results: ${results.meta.date} (${results.meta.mode})

${metaLines(results)}

## Scenarios (medians)

${summaryTable(results)}

Ratios are of requests per second. The ceiling of a read is a bare uWebSockets.js server answering the product's captured bytes from memory; the ceiling of a write (fsync) is a bare uWebSockets.js server doing temp file + fsync + rename + fsync of the folder per request. json-server serves the same entries from a db.json.

## Transports (same product, same data)

${transportTable(results) || 'Not measured: the product ran on node:http (no native uWebSockets.js for this Node), or no GET one/list scenario ran.'}

${boots.join('\n')}
${notes.length ? `\n### Notes\n\n${notes.join('\n')}\n` : ''}
## Against a hand-written fastify 5 server (same entries, both pinned)

${baselineTable(results) || 'Not measured (--at-scale none).'}

Every request of the uncached scenario carries a price threshold of its own (100,000 distinct values), so no cache of either server helps. The guard asks both servers the same questions first and compares ids, their order and totals. Boot: from the spawn, /readyz polled every 10 ms; the last entry is asked right after the first 200 (servable = its answer).

## Goals (measured, not asserted)

${goalsTable(results)}

## Realtime: change-to-subscriber latency

${realtimeTable(results) || 'Not measured.'}

From sending a PATCH through the API to each WebSocket subscriber receiving the change (the writer and the subscribers share one core; the product has the other), each level on a freshly started product; RSS per idle subscriber is the product's settled RSS after subscribing minus before, divided by the subscribers. 1 MB changes: PATCH answer times without subscribers and with them (each write waits until every subscriber has the previous change).

## Scaling

${scalingTable(results)}

${results.scaling.length ? `![scaling](${svgName})` : ''}
`;
}

/** Write <date>-<mode>.json/.md/-scaling.svg into `dir`; update README's table unless told not to. */
export async function writeResults(results, { dir, readme }) {
  await mkdir(dir, { recursive: true });
  const base = `${results.meta.date}-${results.meta.mode}`;
  const svgName = `${base}-scaling.svg`;
  const files = { json: path.join(dir, `${base}.json`), md: path.join(dir, `${base}.md`), svg: path.join(dir, svgName) };
  await writeFile(files.json, `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(files.md, markdown(results, svgName));
  if (results.scaling.length) await writeFile(files.svg, scalingSvg(results.scaling, `streams-kernel ${results.meta.date} ${results.meta.mode}, ${results.meta.commit}`));
  if (readme && existsSync(readme)) {
    const text = await readFile(readme, 'utf8');
    const start = '<!-- latest-results:start -->';
    const end = '<!-- latest-results:end -->';
    const a = text.indexOf(start);
    const b = text.indexOf(end);
    if (a !== -1 && b > a) {
      const block = `${start}\nLatest: [${base}](results/${base}.md)\n\n${metaLines(results)}\n\n${summaryTable(results)}\n\n${transportTable(results)}\n\n${baselineTable(results)}\n\n${goalsTable(results)}\n\n${realtimeTable(results)}\n\n${scalingTable(results)}\n${results.scaling.length ? `\n![scaling](results/${svgName})\n` : ''}${end}`;
      await writeFile(readme, text.slice(0, a) + block + text.slice(b + end.length));
    }
  }
  return files;
}

export { summaryTable, transportTable, goalsTable };
