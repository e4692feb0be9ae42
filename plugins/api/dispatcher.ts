import { isAppError, pluginOfError, type Logger } from '../../kernel/index.js';
import type { InterfaceConfig } from './settings.js';
import { decodePathSegment, Router, type HttpReply, type HttpRequest } from '../http/index.js';
import type { ApiRequest, ApiRouteInfo, EndpointName, ExtraEndpoint, Middleware, ResourceName } from './contracts.js';
import { errorEnvelope } from './envelope.js';
import type { EndpointHandler } from './endpoints/context.js';
import type { ThrottleMiddleware } from './middleware/throttle.js';
import { ENDPOINT_ROUTES } from './routes.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface Compiled {
  route: { name: EndpointName | (string & {}); resource: ResourceName | null; write: boolean };
  handler: EndpointHandler;
  /** The whole chain for this endpoint on this interface: group, gate, interface, resource, endpoint. */
  chain: Middleware[];
}

export interface InterfaceSetup {
  config: InterfaceConfig;
  /** `/api` (no trailing slash), or '' for the root. */
  prefix: string;
  /** Group + gate + interface middleware: what runs on every request under the prefix. */
  base: Middleware[];
  /** Middleware (cors) that also decorates the answers the transport decides itself (413, 408, 431...). */
  transportReplyMiddleware: Middleware[];
  /** The whole chain of one endpoint: base, then resource, then endpoint middleware. */
  chainFor(resource: ResourceName, endpoint: EndpointName): Middleware[];
}

const throttleLists = new WeakMap<Middleware[], ThrottleMiddleware[]>();

/** The throttles of a chain (found once per chain). */
function throttlesOf(chain: Middleware[]): ThrottleMiddleware[] {
  let found = throttleLists.get(chain);
  if (found === undefined) {
    found = chain.filter((m): m is ThrottleMiddleware => typeof (m as Partial<ThrottleMiddleware>).refuseEarly === 'function');
    throttleLists.set(chain, found);
  }
  return found;
}

/** Run `chain[index..]` then `last`. */
function run(chain: Middleware[], index: number, request: ApiRequest, last: () => Promise<HttpReply>): Promise<HttpReply> {
  if (index === chain.length) return last();
  try {
    return Promise.resolve(chain[index]!(request, () => run(chain, index + 1, request, last)));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * One interface: its prefix route on the transport, its endpoints, and the middleware
 * chain that runs on every request under the prefix (404, 405 and OPTIONS included).
 */
export class InterfaceDispatcher {
  private readonly router = new Router<Compiled>();
  private readonly prefixLength: number;

  constructor(
    private readonly setup: InterfaceSetup,
    handlers: Record<EndpointName, EndpointHandler>,
    private readonly errorLinks: (request: ApiRequest) => string,
    private readonly logger: Logger,
    extra: readonly ExtraEndpoint[] = [],
  ) {
    this.prefixLength = setup.prefix.length;
    const resources = new Set(setup.config.resources);
    for (const route of ENDPOINT_ROUTES) {
      if (!resources.has(route.resource)) continue;
      this.router.add(route.method, route.pattern, { route, handler: handlers[route.name], chain: setup.chainFor(route.resource, route.name) });
    }
    for (const endpoint of extra) {
      if (endpoint.resource !== undefined && !resources.has(endpoint.resource)) continue;
      const route = { name: endpoint.name, resource: endpoint.resource ?? null, write: endpoint.write ?? !READ_METHODS.has(endpoint.method.toUpperCase()) };
      const chain = endpoint.resource ? setup.chainFor(endpoint.resource, endpoint.name as EndpointName) : setup.base;
      this.router.add(endpoint.method, endpoint.pattern, { route, handler: endpoint.handler, chain });
    }
  }

  readonly dispatch = (http: HttpRequest): Promise<HttpReply> => {
    const request = http as ApiRequest & { api: ApiRouteInfo };
    const relative = http.path.slice(this.prefixLength) || '/';
    let compiled: Compiled | undefined;
    let allow: string[] = [];
    let problem: unknown;
    try {
      const match = this.router.match(http.method, relative, decodePathSegment);
      if (match) {
        compiled = match.value;
        allow = match.allow;
        if (compiled) http.params = match.params;
      }
    } catch (error) {
      problem = error;
    }
    const route = compiled?.route;
    (request as { api: ApiRouteInfo }).api = {
      interface: this.setup.config.name,
      prefix: this.setup.prefix,
      endpoint: route?.name ?? null,
      resource: route?.resource ?? null,
      write: route ? route.write : !READ_METHODS.has(http.method),
      allow,
      relativePath: http.path.slice(1),
      resources: this.setup.config.resources,
    };
    const chain = compiled?.chain ?? this.setup.base;
    const last = (): Promise<HttpReply> => {
      if (problem !== undefined) return Promise.reject(problem);
      if (compiled) return compiled.handler(request);
      if (allow.length === 0) return Promise.resolve(this.error(request, 404, 'Not Found'));
      const allowHeader: Array<[string, string]> = [['Allow', allow.join(', ')]];
      if (http.method === 'OPTIONS') return Promise.resolve({ status: 204, headers: allowHeader });
      return Promise.resolve(this.error(request, 405, `The ${http.method} method is not supported on this path.`, allowHeader));
    };
    const throttles = throttlesOf(chain);
    let started: Promise<HttpReply>;
    try {
      // An address that spent its window is refused before any middleware (auth) runs.
      for (const throttle of throttles) throttle.refuseEarly(request);
      started = run(chain, 0, request, last);
    } catch (error) {
      started = Promise.reject(error);
    }
    const replied = started.catch((error: unknown) => this.fromError(request, error));
    if (throttles.length === 0) return replied;
    return replied.then((reply) => {
      // A 401/403 from a middleware before the throttle still counts (guessing tokens is throttled).
      if (reply.status === 401 || reply.status === 403) for (const throttle of throttles) throttle.onDenied(request);
      return reply;
    });
  };

  error(request: ApiRequest, status: number, message: string, headers?: Array<[string, string]>): HttpReply {
    return { status, headers, body: errorEnvelope(this.errorLinks(request), [{ message }]) };
  }

  private fromError(request: ApiRequest, error: unknown): HttpReply {
    // A 500 is a failure of ours, whatever threw it: its detail goes to the log under the request id.
    if (isAppError(error) && error.status !== 500) return { status: error.status, headers: error.headers, body: errorEnvelope(this.errorLinks(request), error.errors) };
    this.logger.error({ err: error, plugin: pluginOfError(error), requestId: request.id, method: request.method, path: request.path }, 'API request failed');
    return this.error(request, 500, 'Internal Server Error');
  }
}
