import { definePlugin, storageFailure, type PluginContext } from '../../kernel/index.js';
import { ENTRIES, type EntriesService } from '../entries/index.js';
import { FIELDS, type FieldsService } from '../fields/index.js';
import { HTTP_SERVER, type HttpServer } from '../http/index.js';
import { STREAM_REGISTRY, type StreamRegistry } from '../streams/index.js';
import { DefaultApiService } from './api-service.js';
import { createBaseUrl } from './base-url.js';
import type { EndpointName } from './contracts.js';
import { InterfaceDispatcher } from './dispatcher.js';
import type { EndpointContext, EndpointHandler } from './endpoints/context.js';
import { entryEndpoints } from './endpoints/entries.js';
import { streamEndpoints } from './endpoints/streams.js';
import { API, API_MIDDLEWARE } from './tokens.js';
import { transportReplyDecorator } from './transport-replies.js';

/**
 * The API plugin: every endpoint of the spec under each interface prefix, behind the
 * middleware pipeline (config group -> gate -> interface -> resource -> endpoint).
 * register binds the service so addons can add middleware in their own register step;
 * boot freezes the chains and mounts the interfaces on the transport.
 */
export const apiPlugin = definePlugin({
  name: 'api',
  requires: ['http', 'streams', 'entries', 'fields'],
  register(context) {
    const service = new DefaultApiService(context.config, context.container, context.logger);
    context.container.registerInstance(API, service);
    context.container.registerInstance(API_MIDDLEWARE, service.middleware);
  },
  boot(context) {
    const { container, config } = context as PluginContext;
    const service = container.resolve<DefaultApiService>(API);
    const server = container.resolve<HttpServer>(HTTP_SERVER);
    service.setBaseUrl(createBaseUrl(config, () => `${server.host.includes(':') ? `[${server.host}]` : server.host}:${server.port}`));
    // Services are resolved at first use: a plugin that replaces one (tests, addons) may bind it late.
    let entries: EntriesService | undefined;
    let fields: FieldsService | undefined;
    let registry: StreamRegistry | undefined;
    const endpointContext: EndpointContext = {
      config,
      get registry() {
        return (registry ??= container.resolve<StreamRegistry>(STREAM_REGISTRY));
      },
      get entries() {
        return (entries ??= container.resolve<EntriesService>(ENTRIES));
      },
      get fields() {
        return (fields ??= container.resolve<FieldsService>(FIELDS));
      },
      baseUrl: (request) => service.baseUrl(request),
    };
    const handlers = { ...streamEndpoints(endpointContext), ...entryEndpoints(endpointContext) } as Record<EndpointName, EndpointHandler>;
    const setups = service.interfaces();
    for (const setup of setups) {
      const dispatcher = new InterfaceDispatcher(setup, handlers, service.errorLinks, context.logger, service.extraEndpoints());
      server.route('*', `${setup.prefix}/*`, dispatcher.dispatch);
    }
    server.setTransportReplyDecorator(transportReplyDecorator(setups, service.errorLinks));
    server.addReadinessCheck('entries', () => endpointContext.entries.ready());
    // Files not served as they are on disk are shown, but never take the node out (issue #14).
    server.addReadinessCheck('streams', () => ({ ready: true, details: endpointContext.entries.syncReport() }));
    // Not ready while the data folder refuses writes (disk full, read-only), until one succeeds.
    server.addReadinessCheck('storage', () => storageFailure() === undefined);
  },
  async shutdown(context) {
    // The transport drains requests; then every write the API started must be durable.
    const entries = context.container.isRegistered(ENTRIES, true) ? context.container.resolve<EntriesService>(ENTRIES) : undefined;
    await entries?.drain();
  },
});
