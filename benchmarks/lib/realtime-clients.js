// WebSocket subscribers for the realtime bench, in the harness process. Each is a bare TCP
// socket that speaks just enough of RFC 6455 to subscribe (a handshake, one masked text frame
// out, the `subscribed` frame in); after that a message is only timestamped on arrival, never
// parsed: 10,000 clients share one core, and the `ws` package's per-message work (frame parsing,
// an event, a Buffer per message) put 100+ ms of the harness's own queueing into the p99 it
// measured at 10,000 subscribers.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
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
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.setNoDelay(true);
    const client = { socket, onMessage: null, onClose: null, closed: false };
    let subscribed = false;
    let seen = Buffer.alloc(0);
    const refuse = (why) => {
      reject(new Error(`a subscriber was refused (${why}); raise the product's caps in REALTIME_BENCH_CONFIG (benchmarks/lib/realtime-app.js)`));
      socket.destroy();
    };
    socket.once('error', (error) => (subscribed ? undefined : refuse(error.message)));
    socket.once('close', () => {
      client.closed = true;
      if (!subscribed) refuse('closed before subscribing');
      else client.onClose?.(1006);
    });
    socket.on('data', (chunk) => {
      if (subscribed) {
        client.onMessage?.(chunk);
        return;
      }
      // Until subscribed: the 101 head, then frames until `subscribed` (or an error) arrives.
      const before = seen.length;
      seen = Buffer.concat([seen, chunk]);
      const text = seen.toString('latin1');
      if (!text.startsWith('HTTP/1.1 101')) {
        if (text.includes('\r\n\r\n')) refuse(text.split('\r\n')[0]);
        return;
      }
      // The socket is a WebSocket once the whole 101 head is in: only then the subscribe frame.
      if (!text.slice(0, before).includes('\r\n\r\n') && text.includes('\r\n\r\n')) socket.write(maskedTextFrame(JSON.stringify({ type: 'subscribe', stream })));
      if (text.includes('"type":"subscribed"')) {
        subscribed = true;
        resolve(client);
      } else if (text.includes('"type":"error"')) refuse(text.slice(text.indexOf('{')));
      else if (/\r\n\r\n\x88/.test(text)) refuse(`closed: ${text.slice(text.indexOf('\r\n\r\n') + 6)}`);
    });
    socket.once('connect', () => {
      // No Origin header (a non-browser client), no compression (the product does not offer it).
      socket.write(`GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
  });
}

/** One client-to-server text frame (clients must mask; payloads here are under 126 bytes). */
function maskedTextFrame(text) {
  const payload = Buffer.from(text);
  if (payload.length > 125) throw new Error('frame too long for this client');
  const mask = randomBytes(4);
  const frame = Buffer.alloc(6 + payload.length);
  frame[0] = 0x81;
  frame[1] = 0x80 | payload.length;
  mask.copy(frame, 2);
  for (let i = 0; i < payload.length; i++) frame[6 + i] = payload[i] ^ mask[i & 3];
  return frame;
}

export async function closeAll(clients) {
  await Promise.all(
    clients.map((c) => new Promise((resolve) => {
      if (c.closed || c.socket.destroyed) return resolve();
      c.socket.once('close', resolve);
      c.socket.destroy();
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
