/** Public surface of the stream-routes plugin: stream `routes` served through addon handlers and renderers. */
export type { StreamRouteContext, StreamRouteHandler, StreamRoutes, ViewRenderer } from './contracts.js';
export { STREAM_ROUTES } from './tokens.js';
export { compileUri } from './uri.js';
export { streamRoutesPlugin as default } from './plugin.js';
