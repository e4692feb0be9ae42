import { ConfigError, type Hooks, type KernelConfig, type Logger } from '../../kernel/index.js';
import { NodeHttpServer } from './node-server.js';
import type { HttpServerCore } from './server-core.js';
import { loadNativeUws } from './uws-loader.js';
import { UwsHttpServer } from './uws-server.js';

export { errorBody } from './server-core.js';
export { NodeHttpServer } from './node-server.js';
export { UwsHttpServer } from './uws-server.js';

export interface TransportChoice {
  server: HttpServerCore;
  /** Why the native transport is not serving, when `auto` fell back to node:http. */
  fallbackReason?: string;
}

/** `http.transport: "uws"` was asked and no native binary loads: one line, exit 1. */
export class TransportUnavailableError extends ConfigError {
  constructor(reason: string) {
    super(`http.transport is "uws" but ${reason}`);
    this.name = 'TransportUnavailableError';
  }
}

/**
 * Pick the transport `http.transport` asks for: `auto` (native uWebSockets.js when a
 * binary loads, else node:http), `uws` (native or an error naming each candidate's
 * reason) or `node`.
 */
export function createHttpServer(config: KernelConfig, logger: Logger, hooks: Hooks): TransportChoice {
  const wanted = config.http.transport;
  if (wanted === 'node') return { server: new NodeHttpServer(config, logger, hooks) };
  const loaded = loadNativeUws();
  if (loaded.ok) return { server: new UwsHttpServer(loaded.native, config, logger, hooks) };
  if (wanted === 'uws') throw new TransportUnavailableError(loaded.reason);
  return { server: new NodeHttpServer(config, logger, hooks), fallbackReason: loaded.reason };
}
