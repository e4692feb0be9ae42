// WebSocket subscribers for the realtime bench (`ws`, in the harness process). A message is
// only timestamped on arrival; it is read later, so 10,000 clients in one process add as
// little as possible to the latency they measure.
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { memoryOf } from './processes.js';

/** Open `count` sockets subscribed to `stream`, 100 handshakes at a time. Rejects with the server's reason. */
export async function subscribe(url, count, stream) {
  const clients = [];
  const ws = url.replace(/^http/, 'ws');
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, count - i) }, () => subscribeOne(`${ws}/api/realtime`, stream)));
    clients.push(...batch);
  }
  return clients;
}

function subscribeOne(url, stream) {
  return new Promise((resolve, reject) => {
    // No Origin header (a non-browser client), no compression (the product does not offer it).
    const socket = new WebSocket(url, { perMessageDeflate: false });
    const client = { socket, onMessage: null, onClose: null, closed: false };
    let subscribed = false;
    const refuse = (why) => {
      reject(new Error(`a subscriber was refused (${why}); raise the product's caps in REALTIME_BENCH_CONFIG (benchmarks/lib/realtime-app.js)`));
      socket.terminate();
    };
    socket.once('error', (error) => (subscribed ? undefined : refuse(error.message)));
    socket.once('close', (code, reason) => {
      client.closed = true;
      if (!subscribed) refuse(`closed ${code} ${reason}`);
      else client.onClose?.(code);
    });
    socket.on('message', (data) => {
      if (subscribed) {
        client.onMessage?.(data);
        return;
      }
      const message = JSON.parse(String(data));
      if (message.type === 'subscribed') {
        subscribed = true;
        resolve(client);
      } else if (message.type === 'error') refuse(`${message.status} ${message.message}`);
    });
    socket.once('open', () => socket.send(JSON.stringify({ type: 'subscribe', stream })));
  });
}

export async function closeAll(clients) {
  await Promise.all(
    clients.map((c) => new Promise((resolve) => {
      if (c.closed || c.socket.readyState === WebSocket.CLOSED) return resolve();
      c.socket.once('close', resolve);
      c.socket.terminate();
    })),
  );
}

/**
 * The server's RSS once it has stopped moving: sampled every 250 ms until two samples 1 s
 * apart differ by less than 1%, at most `ms` (a fresh connection's buffers settle in that time).
 */
export async function settledRssKb(pid, ms = 10_000) {
  const until = Date.now() + ms;
  let previous = memoryOf(pid)?.rssKb ?? NaN;
  let stableSince = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = memoryOf(pid)?.rssKb ?? NaN;
    if (Math.abs(now - previous) > previous * 0.01) {
      previous = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 1000 || Date.now() > until) {
      return now;
    }
  }
}

/**
 * Pin this process (all its threads: the clients) to `cpu` for the duration of `task`, when
 * the server is pinned to the other one; the previous affinity comes back afterwards.
 */
export async function onCpu(cpu, pin, task) {
  let previous = null;
  if (pin) {
    try {
      previous = /: (\S+)\s*$/.exec(execFileSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' }))?.[1] ?? null;
      execFileSync('taskset', ['-a', '-cp', cpu, String(process.pid)], { stdio: 'ignore' });
    } catch {
      previous = null;
    }
  }
  try {
    return await task();
  } finally {
    if (previous) execFileSync('taskset', ['-a', '-cp', previous, String(process.pid)], { stdio: 'ignore' });
  }
}

/**
 * Resolves with the number of subscribers that never got the next message (their socket
 * closed) once every other one has it; each arrival's latency from `sent` goes to `into`.
 */
export function arrivals(clients, sent, into, timeoutMs = 30_000) {
  return new Promise((resolve) => {
    let left = 0;
    let lost = 0;
    const timer = setTimeout(() => finish(left), timeoutMs);
    const finish = (extra) => {
      clearTimeout(timer);
      for (const client of clients) client.onMessage = client.onClose = null;
      resolve(lost + extra);
    };
    const settle = () => {
      if (--left === 0) finish(0);
    };
    for (const client of clients) {
      if (client.closed) {
        lost++;
        continue;
      }
      left++;
      client.onMessage = () => {
        into.push(performance.now() - sent);
        client.onMessage = client.onClose = null;
        settle();
      };
      client.onClose = () => {
        lost++;
        client.onMessage = client.onClose = null;
        settle();
      };
    }
    if (left === 0) finish(0);
  });
}
