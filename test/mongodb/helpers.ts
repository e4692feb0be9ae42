import type { KernelConfig, Logger } from '../../kernel/index.js';
import { memoryLogger } from '../helpers/logger.js';
import { mongodbSettings } from '../../plugins/mongodb/index.js';
import { completeConfig } from '../helpers/config.js';

/** A URL where nothing listens (port 9, discard): connects fail fast with ECONNREFUSED. */
export const UNREACHABLE_URL = 'mongodb://127.0.0.1:9/?directConnection=true';

/** Small timeouts so no test waits for the driver's 30 s default. */
export const FAST_OPTIONS = { serverSelectionTimeoutMS: 300, connectTimeoutMS: 300 };

/** A pino logger whose JSON lines are kept for assertions, at debug. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  return memoryLogger('debug');
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
