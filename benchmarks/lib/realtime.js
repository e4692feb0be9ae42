// Realtime (issues #19 and #26). Two measures, each on a freshly started product pinned to its
// core, with the subscribers and the writer in this process, pinned to the other core:
// - change-to-subscriber latency: N WebSocket subscribers on `items`, one PATCH at a time;
//   for each change, the time from sending the PATCH to each subscriber receiving its message
//   (p50/p99/max over all of them), and the server's RSS per idle subscriber;
// - 1 MB changes (`realtime-large.js`): write latency without subscribers and with 1,000.
import path from 'node:path';
import { request } from 'undici';
import { LOAD_CPU, startProduct } from './processes.js';
import { generateRealtimeApp } from './realtime-app.js';
import { arrivals, closeAll, onCpu, settledRssKb, subscribe } from './realtime-clients.js';
import { benchLargeChanges, largeTable } from './realtime-large.js';
import { percentile } from './stats.js';

export const LEVELS = { smoke: [1, 10], quick: [1, 100, 1000, 10_000], full: [1, 100, 1000, 10_000] };
const WRITES = { smoke: 5, quick: 30, full: 200 };
/** Below this many subscribers the RSS difference is mostly noise: not reported per subscriber. */
const RSS_MIN_SUBSCRIBERS = 100;

export async function benchRealtime({ options, workDir, track, log }) {
  const app = await generateRealtimeApp(path.join(workDir, 'realtime-1000'));
  return onCpu(LOAD_CPU, options.pin, async () => {
    const levels = [];
    for (const subscribers of options.subscribers ?? LEVELS[options.mode] ?? LEVELS.quick) {
      const server = track(await startProduct(app.config, { pin: options.pin }));
      try {
        levels.push(await level(server, subscribers, WRITES[options.mode] ?? WRITES.quick, log));
      } finally {
        await server.stop();
      }
    }
    const server = track(await startProduct(app.config, { pin: options.pin }));
    try {
      return { levels, large: await benchLargeChanges({ server, options, log }) };
    } finally {
      await server.stop();
    }
  });
}

async function level(server, subscribers, writes, log) {
  await patchPrice(server.url, 0.25); // warm-up: the write path compiled before anything is timed
  const rssBeforeKb = await settledRssKb(server.pid);
  const clients = await subscribe(server.url, subscribers, 'items');
  const rssAfterKb = await settledRssKb(server.pid);
  const latencies = [];
  let missing = 0;
  try {
    for (let n = 0; n < writes; n++) {
      const sent = performance.now();
      const done = arrivals(clients, sent, latencies);
      await patchPrice(server.url, n + 0.5);
      missing += await done;
    }
  } finally {
    await closeAll(clients);
  }
  latencies.sort((a, b) => a - b);
  const row = {
    subscribers,
    changes: writes,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1],
    missing,
    rssBeforeMb: rssBeforeKb / 1024,
    rssAfterMb: rssAfterKb / 1024,
    rssPerSubscriberBytes: subscribers >= RSS_MIN_SUBSCRIBERS ? ((rssAfterKb - rssBeforeKb) * 1024) / subscribers : null,
  };
  const rss = row.rssPerSubscriberBytes === null ? '' : `, RSS ${row.rssBeforeMb.toFixed(1)} -> ${row.rssAfterMb.toFixed(1)} MB (${(row.rssPerSubscriberBytes / 1024).toFixed(2)} KiB per idle subscriber)`;
  log(`[realtime] ${subscribers} subscriber(s): p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms, max ${row.maxMs.toFixed(2)} ms over ${writes} changes${missing ? `, ${missing} deliveries MISSING (subscriber dropped)` : ''}${rss}`);
  return row;
}

async function patchPrice(url, price) {
  const answer = await request(`${url}/api/streams/items/entries/1`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ price }),
  });
  await answer.body.dump();
  if (answer.statusCode !== 200) throw new Error(`PATCH items/1 answered ${answer.statusCode}`);
}

export function realtimeTable(results) {
  const levels = Array.isArray(results.realtime) ? results.realtime : results.realtime?.levels;
  if (!levels?.length) return '';
  const kib = (bytes) => (bytes === null || bytes === undefined ? '–' : (bytes / 1024).toFixed(2));
  const rows = levels.map((r) => `| ${r.subscribers.toLocaleString('en-US')} | ${r.changes} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.maxMs.toFixed(2)} | ${r.missing ?? 0} | ${kib(r.rssPerSubscriberBytes)} |`);
  const table = `| WebSocket subscribers | changes | p50 ms | p99 ms | max ms | missed | RSS KiB per idle subscriber |\n|---:|---:|---:|---:|---:|---:|---:|\n${rows.join('\n')}`;
  const large = largeTable(results.realtime?.large);
  return large ? `${table}\n\n${large}` : table;
}
