// 1 MB changes (issue #26): how long a PATCH that sets a 1 MB field takes to be answered,
// without subscribers and then with 1,000 subscribed to its stream; between writes the
// harness waits until every subscriber has the change (or was dropped), so writes never
// pile up and each is timed alone. How long delivery took is reported beside it.
import { LARGE_STREAM } from './realtime-app.js';
import { arrivals, closeAll, subscribe } from './realtime-clients.js';
import { startWriter } from './realtime-writer.js';
import { percentile } from './stats.js';

const SUBSCRIBERS = { smoke: 10, quick: 1000, full: 1000 };
const WRITES = { smoke: 3, quick: 10, full: 30 };
export const LARGE_BYTES = 1_000_000;

export async function benchLargeChanges({ server, options, log }) {
  const subscribers = options.largeSubscribers ?? SUBSCRIBERS[options.mode] ?? SUBSCRIBERS.quick;
  const writes = WRITES[options.mode] ?? WRITES.quick;
  const writer = startWriter();
  const url = `${server.url}/api/streams/${LARGE_STREAM}/entries/1`;
  // A different letter each time: a write that changes nothing emits no change.
  let n = 0;
  const write = () => writer.patch(url, JSON.stringify({ body: String.fromCharCode(97 + (n++ % 26)).repeat(LARGE_BYTES) }));
  const alone = [];
  const shared = [];
  const delivery = [];
  let missing = 0;
  let clients = [];
  try {
    for (let i = 0; i < 2; i++) await write(); // warm-up
    for (let i = 0; i < writes; i++) alone.push(await write());
    clients = await subscribe(server.url, subscribers, LARGE_STREAM);
    for (let i = 0; i < writes; i++) {
      const done = arrivals(clients, performance.now(), delivery);
      shared.push(await write());
      missing += await done;
    }
  } finally {
    await closeAll(clients);
    await writer.stop();
  }
  const summary = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] ?? null };
  };
  const result = { bytes: LARGE_BYTES, writes, subscribers, without: summary(alone), with: summary(shared), delivery: summary(delivery), missing };
  log(`[realtime] 1 MB changes: answered p50 ${result.without.p50Ms.toFixed(1)} ms / max ${result.without.maxMs.toFixed(1)} ms alone, p50 ${result.with.p50Ms.toFixed(1)} ms / max ${result.with.maxMs.toFixed(1)} ms with ${subscribers} subscribers (all of them had it: p99 ${result.delivery.p99Ms?.toFixed(1) ?? '–'} ms${missing ? `; ${missing} deliveries MISSING` : ''})`);
  return result;
}

export function largeTable(large) {
  if (!large) return '';
  const f = (v) => (v === null || v === undefined ? '–' : v.toFixed(1));
  const row = (what, s) => `| ${what} | ${f(s.p50Ms)} | ${f(s.p99Ms)} | ${f(s.maxMs)} |`;
  return [
    `| 1 MB changes (${large.writes} writes each) | p50 ms | p99 ms | max ms |`,
    '|---|---:|---:|---:|',
    row('PATCH answered, no subscriber', large.without),
    row(`PATCH answered, ${large.subscribers.toLocaleString('en-US')} subscribers`, large.with),
    row(`change at every subscriber (${large.missing} missed)`, large.delivery),
  ].join('\n');
}
