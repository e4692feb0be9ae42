import { definePlugin, EXTENSIONS } from '../../kernel/index.js';
import { API, API_MIDDLEWARE } from '../api/index.js';
import { ENTRIES } from '../entries/index.js';
import { FIELDS } from '../fields/index.js';
import { HTTP_SERVER } from '../http/index.js';
import { STREAM_REGISTRY, type StreamDefinition } from '../streams/index.js';
import { routeConflictCheck } from './route-conflicts.js';
import { StreamRoutesService } from './stream-routes.js';
import { STREAM_ROUTES } from './tokens.js';

/** Serves the spec's stream `routes` (`uses` handlers and `view` renderers registered by addons). */
export const streamRoutesPlugin = definePlugin(() => {
  const service = new StreamRoutesService();
  return {
    name: 'stream-routes',
    requires: ['streams', 'fields', 'entries', 'http', 'api'],
    provides: [STREAM_ROUTES],
    uses: [STREAM_REGISTRY, API, API_MIDDLEWARE, HTTP_SERVER, ENTRIES, FIELDS],
    register({ provide, use, hooks, config }) {
      service.ledger = use(EXTENSIONS);
      provide(STREAM_ROUTES, service);
      use(STREAM_REGISTRY).addCheck(routeConflictCheck(config));
      hooks.on('definition.changed', ({ action, definition }) => {
        if (action !== 'deleted' && definition) service.mountStream(definition as unknown as StreamDefinition);
      });
    },
    boot({ use, logger }) {
      service.start({
        // Stream routes run behind the API's middleware group (with the caller's identity, #28) and gate, like every API route.
        group: use(API).groupSpecs(),
        server: use(HTTP_SERVER),
        registry: use(STREAM_REGISTRY),
        entries: use(ENTRIES),
        fields: use(FIELDS),
        middleware: use(API_MIDDLEWARE),
        logger,
      });
    },
  };
});
