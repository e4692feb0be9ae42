import { definePlugin } from '../../kernel/index.js';
import type { HttpServerCore } from './server-core.js';
import { createHttpServer } from './server.js';
import { HTTP_SERVER } from './tokens.js';
import { httpSettings } from './settings.js';
import { HTTP_HOOKS } from './hooks.js';

const FALLBACK_HINT =
  'serving on node:http (about half the speed); native uWebSockets.js needs Node 20 or 22 on glibc >= 2.27, or Node 24 on glibc >= 2.38 or macOS; set http.transport to "node" to silence this';

/**
 * The transport plugin. register: pick and bind the server (no I/O) so other plugins add
 * routes. The socket opens in `ready`, once every plugin has booted, so the first request
 * never races the API's boot; then ONE pino line carries `"url":"http://host:port"` and
 * `"transport"`. In `drain` (before any plugin's shutdown) it stops listening and drains;
 * both are bounded by the plugin's time limits like any lifecycle step.
 */
export const httpPlugin = definePlugin(() => {
  let server: HttpServerCore;
  return {
    name: 'http',
    settings: httpSettings,
    emits: HTTP_HOOKS,
    provides: [HTTP_SERVER],
    register(context) {
      const created = createHttpServer(context.config, context.logger, context.hooks);
      server = created.server;
      server.fallbackReason = created.fallbackReason;
      // The `streams` tools never listen: which transport would have served is no news to them.
      if (created.fallbackReason !== undefined && context.config.offline !== true) {
        // Exactly one warning line: what was tried and how to get the fast transport.
        context.logger.warn({ transport: server.transport, reason: created.fallbackReason, hint: FALLBACK_HINT }, 'native uWebSockets.js unavailable: falling back to node:http');
      }
      context.provide(HTTP_SERVER, server);
    },
    async ready(context) {
      // The `streams` tools (check, export, import, migrate) boot every plugin and never listen.
      if (context.config.offline === true) return;
      await server.listen();
      // The url line is the boot contract (scripts and tests wait for it): print it at any
      // log level but `silent`, even when the operator chose warn or error. It is also the
      // boot banner (on a terminal it reads as one); why node:http serves was said once already.
      const announcer = context.config.log.level === 'silent' ? context.logger : context.logger.child({}, { level: 'info' });
      const links = server.links;
      announcer.info({ url: server.url, transport: server.transport, ...(Object.keys(links).length > 0 ? { links } : {}) }, 'listening');
    },
    async drain() {
      // Stop accepting and drain before any plugin shuts down (plugins shut down in reverse
      // boot order, and the API and sources must still serve the requests in flight).
      await server.close();
    },
    async shutdown() {
      await server.close();
    },
  };
});
