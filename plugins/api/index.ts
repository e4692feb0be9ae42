/**
 * Public surface of the api plugin: the endpoints of the spec behind a middleware
 * pipeline. Addons register middleware by name in their `register` step:
 *
 *   const api = container.resolve<ApiService>(API);
 *   api.middleware.register('tenant', (ctx) => (request, next) => ...);
 */
export type {
  ApiRequest,
  ApiRouteInfo,
  ApiService,
  EndpointName,
  ExtraEndpoint,
  Middleware,
  MiddlewareContext,
  MiddlewareFactory,
  MiddlewareHandler,
  MiddlewareRegistry,
  Next,
  ResourceName,
} from './contracts.js';
export { API, API_MIDDLEWARE } from './tokens.js';
export { ApiGate, pathPattern, type PathMatcher } from './gate.js';
export { ENDPOINT_ROUTES, type EndpointRoute } from './routes.js';
export { conditionalReply, envelope, etagOf, matchesIfNoneMatch } from './envelope.js';
export { parseListQuery, FIELD_NAME } from './list-params.js';
export { apiPlugin as default } from './plugin.js';
export { apiSettings, type ApiSettings, type InterfaceConfig } from './settings.js';
