import { definePlugin } from '../../kernel/index.js';
import { UwsHttpServer } from './server.js';
import { HTTP_SERVER } from './tokens.js';

/**
 * The transport plugin. register: bind the server (no I/O) so other plugins add routes.
 * The socket opens once every plugin has booted (`kernel.booted`), so the first request
 * never races the API's boot; then ONE pino line carries `"url":"http://host:port"`.
 * On `kernel.shutdown` (before any plugin's shutdown) it stops listening and drains.
 */
export const httpPlugin = definePlugin({
  name: 'http',
  register(context) {
    context.container.registerInstance(HTTP_SERVER, new UwsHttpServer(context.config, context.logger, context.hooks));
  },
  boot(context) {
    const server = context.container.resolve<UwsHttpServer>(HTTP_SERVER);
    if (!server.native) {
      context.logger.warn('uWebSockets.js native binary did not load: running on its slow pure-JS fallback (use Node 20 on a supported platform)');
    }
    context.hooks.on(
      'kernel.booted',
      async () => {
        await server.listen();
        // The url line is the boot contract (scripts and tests wait for it): print it at any
        // log level but `silent`, even when the operator chose warn or error.
        const announcer = context.config.log.level === 'silent' ? context.logger : context.logger.child({}, { level: 'info' });
        announcer.info({ url: server.url }, 'listening');
      },
      { priority: -1000 },
    );
    // Stop accepting and drain before any plugin shuts down (plugins shut down in reverse
    // boot order, and the API and sources must still serve the requests in flight).
    context.hooks.on('kernel.shutdown', () => server.close(), { priority: -1000 });
  },
  async shutdown(context) {
    await context.container.resolve<UwsHttpServer>(HTTP_SERVER).close();
  },
});

