/**
 * A WebSocket upgrade accepted after an await whose promise another request settled: the
 * continuation runs as a microtask at the end of that other request's uWS callback, while
 * uWS still holds that socket corked. Upgrading there (the upgrade moves the socket to the
 * WebSocket context) made uWS close the new socket at once (1006; a subscribe got no answer,
 * seen in CI under load) or abort the process ("Cork buffer must not be held across event
 * loop iterations!"). The transport upgrades from a turn of its own. Both transports.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Hooks } from '../../kernel/index.js';
import { createLogger } from '../../kernel/logger.js';
import type { HttpServerCore } from '../../plugins/http/server-core.js';
import { completeConfig } from '../helpers/config.js';
import { until } from '../realtime/clients.js';
import { TRANSPORTS } from './transports.js';

for (const { name, create, available, skipReason } of TRANSPORTS) describe.skipIf(!available)(`${name} transport${available ? '' : ` (skipped: ${skipReason})`}`, () => {
  let server: HttpServerCore;
  let root: string;
  /** Upgrades waiting for a `GET /release` (settled inside that request's handler). */
  const waiting: Array<() => void> = [];

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'upgrade-'));
    server = create(completeConfig({ http: { port: 0 } }, root), createLogger('silent'), new Hooks());
    server.route('GET', '/socket', async (req) => {
      if (!req.upgrade) return { status: 426, body: '{}' };
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { status: 101, upgrade: (peer) => ({ onMessage: (text) => void peer.send(`echo ${text}`), onClose: () => undefined }) };
    });
    server.route('GET', '/release', () => {
      for (const resolve of waiting.splice(0)) resolve();
      return { status: 200, body: '{}' };
    });
    await server.listen();
  });

  afterAll(async () => {
    await server.close(1000);
    rmSync(root, { recursive: true, force: true });
  });

  it('a socket accepted in the continuation of another request keeps its connection and answers', async () => {
    for (let round = 0; round < 20; round++) {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/socket`);
      const closes: number[] = [];
      const messages: string[] = [];
      ws.on('close', (code) => closes.push(code));
      ws.on('message', (data) => messages.push(String(data)));
      const opened = new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      await until(() => waiting.length === 1, 5000);
      expect((await request(`${server.url}/release`)).statusCode).toBe(200);
      await opened;
      ws.send(`hello ${round}`);
      await until(() => messages.length === 1 || closes.length > 0, 5000);
      expect({ round, closes, messages }).toEqual({ round, closes: [], messages: [`echo hello ${round}`] });
      ws.close();
      await until(() => closes.length > 0, 5000);
    }
  });
});
