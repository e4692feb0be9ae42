import { Writable } from 'node:stream';
import pino from 'pino';
import type { KernelConfig, Logger } from '../../kernel/index.js';
import { mongodbSettings } from '../../plugins/mongodb/index.js';
import { completeConfig } from '../helpers/config.js';

/** A URL where nothing listens (port 9, discard): connects fail fast with ECONNREFUSED. */
export const UNREACHABLE_URL = 'mongodb://127.0.0.1:9/?directConnection=true';

/** Small timeouts so no test waits for the driver's 30 s default. */
export const FAST_OPTIONS = { serverSelectionTimeoutMS: 300, connectTimeoutMS: 300 };

/** A pino logger whose JSON lines are kept for assertions. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

export function mongoConfig(connections: Record<string, unknown>, root = process.cwd()): KernelConfig {
  return completeConfig({ mongodb: { connections } }, root, [mongodbSettings]);
}

export async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
