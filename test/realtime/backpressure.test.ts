import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REALTIME } from '../../plugins/realtime/index.js';
import type { TestApp } from '../helpers/app.js';
import { TRANSPORTS } from '../http/transports.js';
import { cleanups, listen, runCleanups, socket, until } from './clients.js';
import { boot } from './films-app.js';

/**
 * Issue #19 item 3: a client that does not read is dropped once `http.stream_buffer_bytes`
 * wait for it, over WebSocket and Server-Sent Events, while a client that reads gets every
 * change. "Dropped" means the server closes the connection (the client sees it end once it
 * reads again), not only that it stops writing to it.
 */
afterEach(runCleanups);

const BIG = 'x'.repeat(400 * 1024);
/** Changes this large are copied to subscribers (not sent as references), and no realtime budget drops first. */
const BIG_CHANGES = { history: { max_change_bytes: 1048576 }, limits: { send_buffer_bytes: 1048576 } };

/** Subscribers the server still serves: open event streams and WebSocket sessions. */
function served(app: TestApp): number {
  const realtime = app.kernel.get(REALTIME);
  return realtime.open.size + realtime.sessions.size;
}

/** Write big changes until the server has dropped a subscriber (at most `max` writes). */
async function flood(app: TestApp, subscribersBefore: number, max = 80): Promise<number> {
  let writes = 0;
  while (served(app) >= subscribersBefore && writes < max) {
    const answer = await app.request('PUT', '/api/streams/films/entries/1', { id: 1, title: `${BIG}${writes}`, year: 1979 });
    expect(answer.status).toBe(200);
    writes++;
  }
  return writes;
}

/** A raw TCP client: reads until `ready` appears in what came, then stops reading. */
async function stalled(app: TestApp, head: string, ready: string): Promise<{ socket: net.Socket; ended: Promise<void> }> {
  const url = new URL(app.url);
  const client = net.connect(Number(url.port), '127.0.0.1');
  cleanups.push(() => void client.destroy());
  let seen = '';
  const ended = new Promise<void>((resolve) => client.once('close', () => resolve()));
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  const got = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('latin1');
      if (seen.includes(ready)) {
        client.off('data', onData);
        client.pause();
        resolve();
      }
    };
    client.on('data', onData);
  });
  client.write(head);
  await got;
  return { socket: client, ended };
}

for (const transport of TRANSPORTS) {
  describe.skipIf(!transport.available)(`backpressure over ${transport.name}${transport.available ? '' : ` (skipped: ${transport.skipReason})`}`, () => {
    it('a WebSocket client that does not read is dropped at the buffer limit; a reading one gets every change', async () => {
      const app = await boot(transport.name, { http: { transport: transport.name, stream_buffer_bytes: 65536, max_body: 1048576 }, realtime: BIG_CHANGES });
      const slow = await socket(`${app.url}/api/realtime`);
      const closed = new Promise<void>((resolve) => slow.ws.once('close', () => resolve()));
      slow.ws.send('{"type":"subscribe","stream":"films"}');
      await until(() => slow.messages.length === 1);
      slow.ws.pause();
      const reader = await socket(`${app.url}/api/realtime`);
      reader.ws.send('{"type":"subscribe","stream":"films"}');
      await until(() => reader.messages.length === 1);
      const writes = await flood(app, 2);
      expect(served(app)).toBe(1);
      await until(() => reader.messages.length === writes + 1, 5000);
      // The server closed the connection: reading again drains what was sent, then it ends.
      slow.ws.resume();
      await closed;
      expect(slow.messages.length).toBeLessThan(writes + 1);
    }, 30000);

    it('a Server-Sent Events client that does not read is dropped at the buffer limit; a reading one gets every change', async () => {
      const app = await boot(transport.name, { http: { transport: transport.name, stream_buffer_bytes: 65536, max_body: 1048576 }, realtime: BIG_CHANGES });
      const slow = await stalled(app, 'GET /api/streams/films/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n', ': connected');
      const reader = listen(`${app.url}/api/streams/films/changes`);
      await reader.opened;
      const writes = await flood(app, 2);
      expect(served(app)).toBe(1);
      await until(() => reader.events.length === writes, 5000);
      expect(app.kernel.get(REALTIME).feed.subscribers).toBe(1);
      // The connection is closed, not just ended: reading again drains it, then it closes.
      slow.socket.resume();
      await slow.ended;
    }, 30000);
  });
}
