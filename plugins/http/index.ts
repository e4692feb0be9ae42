/**
 * Public surface of the http plugin: the transport (native uWebSockets.js, or node:http
 * where no native binary loads). Other plugins and addons add routes with
 * `use(HTTP_SERVER).route(...)`.
 */
export type { HttpReply, HttpRequest, HttpServer, InjectedRequest, ReadinessCheck, ReadinessReport, StreamSink, WebSocketAccept, WebSocketPeer, WebSocketSession, RouteHandler, TransportReplyDecorator } from './contracts.js';
export { HTTP_SERVER } from './tokens.js';
export { Router, type RouteMatch } from './router.js';
export { decodePathSegment } from './server-core.js';
export { parseForm, type FormObject, type FormValue } from './form-parser.js';
export { assertSafeKeys } from './body-parser.js';
export { statusText } from './status-text.js';
export { freezeReply } from './frozen-reply.js';
export { httpPlugin as default } from './plugin.js';
export { httpSettings, type HttpSettings } from './settings.js';
export type * from './hooks.js';
