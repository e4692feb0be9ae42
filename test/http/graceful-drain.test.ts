import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { startServer } from '../helpers/server-process.js';
import { TRANSPORTS } from './transports.js';

/**
 * Issue #34 item 7: keep-alive clients hammering the built server (`node kernel/boot.js`)
 * across a SIGTERM, on each transport, see answers (the last ones with `Connection: close`)
 * and then refused connections, never a connection reset: a request sent on an open
 * keep-alive connection during the drain's grace is answered, not met by a closed socket.
 */

const CLIENTS = 16;

interface Tally {
  answered: number;
  closing: number;
  refused: number;
  resets: string[];
}

/** One keep-alive client sending one request after another until the server is gone. */
async function hammer(url: string, tally: Tally, stop: () => boolean): Promise<void> {
  const client = new Client(url, { pipelining: 1, keepAliveTimeout: 30_000 });
  try {
    while (!stop()) {
      try {
        const answer = await client.request({ method: 'GET', path: '/api/streams/books/entries/1' });
        await answer.body.dump();
        expect(answer.statusCode).toBe(200);
        tally.answered++;
        if (String(answer.headers.connection).toLowerCase() === 'close') tally.closing++;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        // The server stopped listening: a new connection is refused. That is the clean end.
        if (code === 'ECONNREFUSED' || (error instanceof errors.ConnectTimeoutError)) {
          tally.refused++;
          return;
        }
        tally.resets.push(`${code} ${(error as Error).message}`);
        return;
      }
    }
  } finally {
    await client.destroy().catch(() => undefined);
  }
}

describe('graceful shutdown under keep-alive load', () => {
  for (const transport of TRANSPORTS) {
    it.skipIf(!transport.available)(`no client sees a reset across a SIGTERM (${transport.name}${transport.available ? '' : `, skipped: ${transport.skipReason}`})`, async () => {
      const data = path.join(mkdtempSync(path.join(os.tmpdir(), 'drain-')), 'data');
      const server = await startServer(['--config', 'config/default.json', '--port', '0', '--data', data, '--transport', transport.name, '--log-level', 'warn']);
      const tally: Tally = { answered: 0, closing: 0, refused: 0, resets: [] };
      let gone = false;
      void server.exit.then(() => (gone = true));
      const loops = Array.from({ length: CLIENTS }, () => hammer(server.url, tally, () => false));
      // Under load first (every client has answers on its connection), then the signal.
      while (tally.answered < CLIENTS * 20) await new Promise((r) => setTimeout(r, 5));
      server.child.kill('SIGTERM');
      await Promise.all(loops);
      expect(await server.exit).toBe(0);
      expect(gone).toBe(true);
      expect(tally.resets).toEqual([]);
      expect(tally.refused).toBe(CLIENTS);
      // Answers during the drain said the connection closes after them.
      expect(tally.closing).toBeGreaterThan(0);
    }, 60_000);
  }
});
