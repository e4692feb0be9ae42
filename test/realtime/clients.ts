/**
 * Real clients of the realtime endpoints for the realtime suites: the `eventsource` package
 * (what browsers' EventSource does) and the `ws` package. Each registers its own teardown in
 * `cleanups`, which the suite runs after each test (`afterEach(runCleanups)`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';

export const cleanups: Array<() => Promise<void> | void> = [];

export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export interface Seen {
  event: string;
  id: string;
  data: { stream: string; id: unknown; data: Record<string, unknown> | null };
}

/** An EventSource client collecting events. */
export function listen(url: string, init?: ConstructorParameters<typeof EventSource>[1]): { source: EventSource; events: Seen[]; opened: Promise<void> } {
  const source = new EventSource(url, init);
  const events: Seen[] = [];
  for (const type of ['created', 'updated', 'deleted']) {
    source.addEventListener(type, (e) => events.push({ event: type, id: (e as MessageEvent).lastEventId, data: JSON.parse((e as MessageEvent).data as string) as Seen['data'] }));
  }
  const opened = new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    source.onerror = (e) => reject(new Error(`EventSource error ${String((e as { code?: number }).code)}`));
  });
  cleanups.push(() => source.close());
  return { source, events, opened };
}

/** Wait until `check` holds (polled every 10 ms), or fail after `ms`. */
export async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A ws client collecting messages. */
export async function socket(url: string, headers?: Record<string, string>): Promise<{ ws: WebSocket; messages: Array<Record<string, unknown>> }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
  const messages: Array<Record<string, unknown>> = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  cleanups.push(() => ws.terminate());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, messages };
}

/** One delivery a webhook receiver got (`answered`: set by an `answer` that replied). */
export interface Received {
  id: string;
  signature: string;
  body: string;
  answered: boolean;
}

/** A webhook receiver on 127.0.0.1: `answer` decides each reply (it may hold the response). */
export async function webhookReceiver(answer: (n: number, res: ServerResponse, received: Received) => void): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const one = { id: String(req.headers['streams-delivery']), signature: String(req.headers['streams-signature']), body, answered: false };
      received.push(one);
      answer(received.length, res, one);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received };
}
