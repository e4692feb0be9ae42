import { definePlugin, EXTENSIONS, STORAGE_HEALTH } from '../../kernel/index.js';
import { ENTRIES, type EntriesService } from '../entries/index.js';
import { FIELDS } from '../fields/index.js';
import { HTTP_SERVER } from '../http/index.js';
import { STREAM_REGISTRY } from '../streams/index.js';
import { DefaultApiService } from './api-service.js';
import { createBaseUrl } from './base-url.js';
import type { EndpointName } from './contracts.js';
import { InterfaceDispatcher } from './dispatcher.js';
import type { EndpointContext, EndpointHandler } from './endpoints/context.js';
import { entryEndpoints } from './endpoints/entries.js';
import { streamEndpoints } from './endpoints/streams.js';
import { API, API_MIDDLEWARE } from './tokens.js';
import { transportReplyDecorator } from './transport-replies.js';
import { apiSettings } from './settings.js';

/**
 * The API plugin: every endpoint of the spec under each interface prefix, behind the
 * middleware pipeline (config group -> gate -> interface -> resource -> endpoint).
 * register binds the service so addons can add middleware in their own register step;
 * boot freezes the chains and mounts the interfaces on the transport.
 */
export const apiPlugin = definePlugin(() => {
  let service: DefaultApiService;
  let entries: EntriesService | undefined;
  return {
    name: 'api',
    settings: apiSettings,
    requires: ['http', 'streams', 'entries', 'fields'],
    provides: [API, API_MIDDLEWARE],
    uses: [HTTP_SERVER, ENTRIES, STREAM_REGISTRY, FIELDS],
    register(context) {
      service = new DefaultApiService(context.config, context.container, context.logger, context.use(EXTENSIONS));
      context.provide(API, service);
      context.provide(API_MIDDLEWARE, service.middleware);
    },
    boot({ use, config, logger }) {
      const server = use(HTTP_SERVER);
      service.setBaseUrl(createBaseUrl(config, () => `${server.host.includes(':') ? `[${server.host}]` : server.host}:${server.port}`));
      entries = use(ENTRIES);
      const endpointContext: EndpointContext = { config, registry: use(STREAM_REGISTRY), entries, fields: use(FIELDS), baseUrl: (request) => service.baseUrl(request) };
      const handlers = { ...streamEndpoints(endpointContext), ...entryEndpoints(endpointContext) } as Record<EndpointName, EndpointHandler>;
      const setups = service.interfaces();
      for (const setup of setups) {
        const dispatcher = new InterfaceDispatcher(setup, handlers, service.errorLinks, logger, service.extraEndpoints());
        server.route('*', `${setup.prefix}/*`, dispatcher.dispatch);
      }
      server.setTransportReplyDecorator(transportReplyDecorator(setups, service.errorLinks));
      const served = entries;
      server.addReadinessCheck('entries', () => served.ready());
      // Files not served as they are on disk are shown, but never take the node out (issue #14).
      server.addReadinessCheck('streams', () => ({ ready: true, details: served.syncReport() }));
      // Not ready while the data folder refuses writes (disk full, read-only), until one succeeds.
      const storage = use(STORAGE_HEALTH);
      server.addReadinessCheck('storage', () => storage.failure() === undefined);
    },
    async shutdown() {
      // The transport drains requests; then every write the API started must be durable.
      await entries?.drain();
    },
  };
});
