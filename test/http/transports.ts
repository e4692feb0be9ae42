/**
 * The transports every HTTP contract test runs against. uWebSockets.js is skipped, with
 * the loader's reason printed, where no native binary loads (Node 24 on Debian 12).
 */
import type { Hooks, KernelConfig, Logger } from '../../kernel/index.js';
import type { HttpServerCore } from '../../plugins/http/server-core.js';
import { NodeHttpServer, UwsHttpServer } from '../../plugins/http/server.js';
import { loadNativeUws } from '../../plugins/http/uws-loader.js';

export interface TransportCase {
  name: 'uws' | 'node';
  available: boolean;
  skipReason: string;
  create(config: KernelConfig, logger: Logger, hooks: Hooks): HttpServerCore;
}

const native = loadNativeUws();
if (!native.ok) console.log(`[transports] uWebSockets.js cases skipped: ${native.reason}`);

export const TRANSPORTS: TransportCase[] = [
  {
    name: 'uws',
    available: native.ok,
    skipReason: native.ok ? '' : native.reason,
    create(config, logger, hooks) {
      if (!native.ok) throw new Error(native.reason);
      return new UwsHttpServer(native.native, config, logger, hooks);
    },
  },
  { name: 'node', available: true, skipReason: '', create: (config, logger, hooks) => new NodeHttpServer(config, logger, hooks) },
];
