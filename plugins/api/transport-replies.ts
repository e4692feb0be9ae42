import type { ErrorElement } from '../../kernel/index.js';
import type { HttpReply, HttpRequest, TransportReplyDecorator } from '../http/index.js';
import type { ApiRequest, ApiRouteInfo } from './contracts.js';
import type { InterfaceSetup } from './dispatcher.js';
import { errorEnvelope } from './envelope.js';

/**
 * Answers the transport writes before any middleware ran (413 from Content-Length, 408,
 * 404/405 outside a route) become real API answers under an interface prefix: the
 * interface's CORS headers (so a browser can read the error) and the envelope's links.
 */
export function transportReplyDecorator(setups: InterfaceSetup[], errorLinks: (request: ApiRequest) => string): TransportReplyDecorator {
  // Longest prefix first; the root interface ('') matches everything left.
  const ordered = [...setups].sort((a, b) => b.prefix.length - a.prefix.length);
  return (http: HttpRequest, reply: HttpReply): HttpReply => {
    const setup = ordered.find((s) => s.prefix === '' || http.path === s.prefix || http.path.startsWith(`${s.prefix}/`));
    if (setup === undefined) return reply;
    const request = http as ApiRequest;
    if ((request as { api?: ApiRouteInfo }).api === undefined) {
      (request as { api: ApiRouteInfo }).api = {
        interface: setup.config.name,
        prefix: setup.prefix,
        endpoint: null,
        resource: null,
        write: !['GET', 'HEAD', 'OPTIONS'].includes(http.method),
        allow: [],
        relativePath: http.path.slice(1),
        resources: setup.config.resources,
      };
    }
    let result = reply;
    for (const middleware of setup.transportReplyMiddleware) {
      const next = middleware(request, () => Promise.resolve(result));
      // cors works synchronously: it sets headers on the request (the transport writes
      // them) and returns next()'s promise, or answers a preflight itself.
      if (next instanceof Promise) next.catch(() => undefined);
      else result = next;
    }
    if (typeof result.body !== 'string' || result !== reply) return result;
    let errors: ErrorElement[] = [];
    try {
      errors = (JSON.parse(result.body) as { errors?: ErrorElement[] }).errors ?? [];
    } catch {
      return result;
    }
    return { ...result, body: errorEnvelope(errorLinks(request), errors) };
  };
}
