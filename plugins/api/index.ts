/**
 * Public surface of the api plugin: the endpoints of the spec behind a middleware
 * pipeline. Addons register middleware by name in their `register` step:
 *
 *   const api = use(API);
 *   api.middleware.register('tenant', (ctx) => (request, next) => ...);
 */
export type { ApiRequest, ApiRouteInfo, ApiService, EndpointName, ExtraEndpoint, Middleware, MiddlewareCheck, MiddlewareContext, MiddlewareFactory, MiddlewareHandler, MiddlewareRegistry, Next, ResourceName } from './contracts.js';
export { API, API_MIDDLEWARE } from './tokens.js';
export { ApiGate } from './gate.js';
export { conditionalReply, envelope } from './envelope.js';
export { parseListQuery } from './list-params.js';
export { apiPlugin as default } from './plugin.js';
export { apiSettings, type ApiSettings, type InterfaceConfig } from './settings.js';
export { ACCESS_LOCAL, accessOf, definitionForCaller, readScopeOf, type AccessUser, type RequestAccess, type StreamAction, type WriteAction, type WriteScope } from './access.js';
export { apiTokens } from './middleware/auth-bearer.js';
export { checkMiddleware, runMiddleware } from './middleware-chain.js';
