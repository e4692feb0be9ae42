// Change-to-subscriber latency (issue #19): N WebSocket subscribers on one stream, one
// PATCH at a time through the API; for each change, the time from sending the PATCH to
// each subscriber receiving its message. The product runs pinned to its core; the
// subscribers and the writer live in this process, on the other core.
import path from 'node:path';
import { request } from 'undici';
import WebSocket from 'ws';
import { generateFilebaseApp } from './dataset.js';
import { startProduct } from './processes.js';

const LEVELS = { smoke: [1, 10], quick: [1, 100, 1000], full: [1, 100, 1000] };
const WRITES = { smoke: 5, quick: 30, full: 200 };

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function subscribe(url, count) {
  const clients = [];
  const ws = url.replace(/^http/, 'ws');
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, () => new Promise((resolve, reject) => {
        const socket = new WebSocket(`${ws}/api/realtime`);
        const client = { socket, onChange: null };
        socket.once('error', reject);
        socket.on('message', (data) => {
          const message = JSON.parse(String(data));
          if (message.type === 'subscribed') resolve(client);
          else if (message.type === 'updated') client.onChange?.(message);
        });
        socket.once('open', () => socket.send('{"type":"subscribe","stream":"items"}'));
      })),
    );
    clients.push(...batch);
  }
  return clients;
}

/** p50/p99 change-to-subscriber latency at each level of subscribers. */
export async function benchRealtime({ options, workDir, track, log }) {
  const levels = LEVELS[options.mode] ?? LEVELS.quick;
  const writes = WRITES[options.mode] ?? WRITES.quick;
  const app = await generateFilebaseApp(path.join(workDir, 'realtime-1000'), 1000, { peer: false });
  const server = track(await startProduct(app.config, { pin: options.pin }));
  const results = [];
  try {
    for (const level of levels) {
      const clients = await subscribe(server.url, level);
      const latencies = [];
      for (let n = 0; n < writes; n++) {
        const done = new Promise((resolve) => {
          let left = clients.length;
          const sent = performance.now();
          for (const client of clients) {
            client.onChange = () => {
              latencies.push(performance.now() - sent);
              client.onChange = null;
              if (--left === 0) resolve();
            };
          }
        });
        const answer = await request(`${server.url}/api/streams/items/entries/1`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ price: n + 0.5 }),
        });
        await answer.body.dump();
        await done;
      }
      for (const client of clients) client.socket.terminate();
      latencies.sort((a, b) => a - b);
      const row = { subscribers: level, changes: writes, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: latencies[latencies.length - 1] };
      results.push(row);
      log(`[realtime] ${level} subscriber(s): p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms over ${writes} changes (from PATCH sent to message received, each subscriber)`);
    }
  } finally {
    await server.stop();
  }
  return results;
}

export function realtimeTable(results) {
  if (!results.realtime?.length) return '';
  const rows = results.realtime.map((r) => `| ${r.subscribers} | ${r.changes} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.maxMs.toFixed(2)} |`);
  return `| WebSocket subscribers | changes | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|\n${rows.join('\n')}`;
}
