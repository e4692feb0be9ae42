import { definePlugin } from '../../kernel/index.js';
import { API_MIDDLEWARE, type MiddlewareRegistry } from '../api/index.js';
import { ENTRIES, type EntriesService } from '../entries/index.js';
import { FIELDS, type FieldsService } from '../fields/index.js';
import { HTTP_SERVER, type HttpServer } from '../http/index.js';
import { STREAM_REGISTRY, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import { routeConflictCheck } from './route-conflicts.js';
import { StreamRoutesService } from './stream-routes.js';
import { STREAM_ROUTES } from './tokens.js';

/** Serves the spec's stream `routes` (`uses` handlers and `view` renderers registered by addons). */
export const streamRoutesPlugin = definePlugin({
  name: 'stream-routes',
  requires: ['streams', 'fields', 'entries', 'http', 'api'],
  register({ container, hooks, config }) {
    const service = new StreamRoutesService();
    container.registerInstance(STREAM_ROUTES, service);
    container.resolve<StreamRegistry>(STREAM_REGISTRY).addCheck(routeConflictCheck(config));
    hooks.on('definition.changed', ({ action, definition }) => {
      if (action !== 'deleted' && definition) service.mountStream(definition as unknown as StreamDefinition);
    });
  },
  boot({ container, logger, config }) {
    container.resolve<StreamRoutesService>(STREAM_ROUTES).start({
      // Stream routes run behind the API's middleware group and gate, like every API route.
      group: [...config.api.middleware, config.api.gate_middleware],
      server: container.resolve<HttpServer>(HTTP_SERVER),
      registry: container.resolve<StreamRegistry>(STREAM_REGISTRY),
      entries: container.resolve<EntriesService>(ENTRIES),
      fields: container.resolve<FieldsService>(FIELDS),
      middleware: container.resolve<MiddlewareRegistry>(API_MIDDLEWARE),
      logger,
    });
  },
});
