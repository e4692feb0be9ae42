import { queryWarnings, withWarnings } from './query-warnings.js';
import { isAppError, pluginOfError, type Logger } from '../../kernel/index.js';
import type { InterfaceConfig } from './settings.js';
import { decodePathSegment, Router, type HttpReply, type HttpRequest } from '../http/index.js';
import type { ApiRequest, ApiRouteInfo, EndpointName, ExtraEndpoint, Middleware, MiddlewareCheck, ResourceName } from './contracts.js';
import { errorEnvelope } from './envelope.js';
import { runChain } from './middleware-chain.js';
import type { EndpointHandler } from './endpoints/context.js';
import type { ThrottleMiddleware } from './middleware/throttle.js';
import { ENDPOINT_ROUTES } from './routes.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface Compiled {
  route: { name: EndpointName | (string & {}); resource: ResourceName | null; write: boolean };
  handler: EndpointHandler;
  /** The whole chain for this endpoint on this interface: group, gate, interface, resource, endpoint. */
  chain: Middleware[];
  /** The throttles among `chain`. */
  throttles: ThrottleMiddleware[];
  /** The chain's synchronous forms when every middleware of it has one (`MiddlewareCheck`) and none is a throttle, else null. */
  checks: MiddlewareCheck[] | null;
  /** The route's template with the interface's prefix (`request.route`), made at its first request. */
  template?: string;
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

/** An endpoint with its chain, and what the dispatcher reads of the chain on every request (found once, at boot). */
function compileRoute(route: Compiled['route'], handler: EndpointHandler, chain: Middleware[]): Compiled {
  const throttles = throttlesOf(chain);
  // A throttled chain keeps `handle`: the throttle counts the denials of what runs after it.
  return { route, handler, chain, throttles, checks: throttles.length === 0 ? checksOf(chain) : null };
}

/** A chain's synchronous forms, in order, when each of its middleware offers one. */
function checksOf(chain: Middleware[]): MiddlewareCheck[] | null {
  const checks: MiddlewareCheck[] = [];
  for (const middleware of chain) {
    if (middleware.check === undefined) return null;
    checks.push(middleware.check);
  }
  return checks;
}

/** The throttles of a chain (found once per chain, at boot). */
function throttlesOf(chain: Middleware[]): ThrottleMiddleware[] {
  return chain.filter((m): m is ThrottleMiddleware => typeof (m as Partial<ThrottleMiddleware>).refuseEarly === 'function');
}

/** A request's route information; its relative path is cut out only when read (by a gate with exceptions). */
class RouteInfo implements ApiRouteInfo {
  readonly interface: string;
  readonly prefix: string;
  readonly resources: readonly ResourceName[];
  private relative: string | undefined;

  constructor(
    setup: InterfaceSetup,
    readonly endpoint: ApiRouteInfo['endpoint'],
    readonly resource: ResourceName | null,
    readonly write: boolean,
    readonly allow: string[],
    private readonly path: string,
  ) {
    this.interface = setup.config.name;
    this.prefix = setup.prefix;
    this.resources = setup.config.resources;
  }

  get relativePath(): string {
    return (this.relative ??= this.path.slice(1));
  }
}


/**
 * One interface: its prefix route on the transport, its endpoints, and the middleware
 * chain that runs on every request under the prefix (404, 405 and OPTIONS included).
 */
export class InterfaceDispatcher {
  private readonly router = new Router<Compiled>();
  private readonly prefixLength: number;
  private readonly baseThrottles: ThrottleMiddleware[];

  constructor(
    private readonly setup: InterfaceSetup,
    handlers: Record<EndpointName, EndpointHandler>,
    private readonly errorLinks: (request: ApiRequest) => string,
    private readonly logger: Logger,
    extra: readonly ExtraEndpoint[] = [],
  ) {
    this.prefixLength = setup.prefix.length;
    this.baseThrottles = throttlesOf(setup.base);
    const resources = new Set(setup.config.resources);
    for (const route of ENDPOINT_ROUTES) {
      if (!resources.has(route.resource)) continue;
      this.router.add(route.method, route.pattern, compileRoute(route, handlers[route.name], setup.chainFor(route.resource, route.name)));
    }
    for (const endpoint of extra) {
      if (endpoint.resource !== undefined && !resources.has(endpoint.resource)) continue;
      const route = { name: endpoint.name, resource: endpoint.resource ?? null, write: endpoint.write ?? !READ_METHODS.has(endpoint.method.toUpperCase()) };
      const chain = endpoint.resource ? setup.chainFor(endpoint.resource, endpoint.name as EndpointName) : setup.base;
      this.router.add(endpoint.method, endpoint.pattern, compileRoute(route, endpoint.handler, chain));
    }
  }

  /**
   * Run the chain, then the endpoint. When every middleware of the route has its synchronous
   * form (`checked`: the default chain, the gate alone), or hands on `next()`'s own promise (any
   * middleware that only checks or sets headers), and the endpoint answered at once (a cached
   * GET), the reply is returned as a value: the transport writes it within the request's own
   * call, with no promise and no abort watch. Anything else (an async middleware, a wrapped
   * reply, a load) takes the promise path.
   */
  readonly dispatch = (http: HttpRequest): HttpReply | Promise<HttpReply> => {
    const request = http as ApiRequest & { api: ApiRouteInfo };
    let compiled: Compiled | undefined;
    let allow: string[] = [];
    let problem: unknown;
    try {
      const match =
        http.path.length === this.prefixLength
          ? this.router.match(http.method, '/', decodePathSegment)
          : this.router.match(http.method, http.path, decodePathSegment, this.prefixLength);
      if (match) {
        compiled = match.value;
        allow = match.allow;
        // The template, never the URL: metrics label requests by it (request.handled).
        if (compiled) {
          http.params = match.params;
          http.route = compiled.template ??= this.setup.prefix + match.pattern;
        } else http.route = this.setup.prefix + match.pattern;
      }
    } catch (error) {
      problem = error;
    }
    const route = compiled?.route;
    (request as { api: ApiRouteInfo }).api = new RouteInfo(
      this.setup,
      route?.name ?? null,
      route?.resource ?? null,
      route ? route.write : !READ_METHODS.has(http.method),
      allow,
      http.path,
    );
    // Every middleware of the route has its synchronous form: no `next`, no promise per middleware.
    if (compiled?.checks != null && problem === undefined) return this.checked(request, compiled, compiled.checks, 0);
    const chain = compiled?.chain ?? this.setup.base;
    // The endpoint's reply when it came at once, and the settled promise handed up the chain for it.
    let now: HttpReply | undefined;
    let nowPromise: Promise<HttpReply> | undefined;
    const last = (): Promise<HttpReply> => {
      let answer: HttpReply | Promise<HttpReply>;
      if (problem !== undefined) return Promise.reject(problem);
      if (compiled) {
        try {
          answer = this.answer(request, compiled);
        } catch (error) {
          // next() is a promise to middleware: a handler's synchronous throw becomes its rejection.
          return Promise.reject(error);
        }
      } else if (allow.length === 0) answer = this.error(request, 404, 'Not Found');
      else {
        const allowHeader: Array<[string, string]> = [['Allow', allow.join(', ')]];
        answer = http.method === 'OPTIONS' ? { status: 204, headers: allowHeader } : this.error(request, 405, `The ${http.method} method is not supported on this path.`, allowHeader);
      }
      if (answer instanceof Promise) return answer;
      now = answer;
      nowPromise = Promise.resolve(answer);
      return nowPromise;
    };
    const throttles = compiled?.throttles ?? this.baseThrottles;
    let started: Promise<HttpReply>;
    try {
      // An address that spent its window is refused before any middleware (auth) runs.
      for (const throttle of throttles) throttle.refuseEarly(request);
      started = runChain(chain, 0, request, last);
    } catch (error) {
      started = Promise.reject(error);
    }
    if (started === nowPromise) return this.denied(request, throttles, now!);
    const replied = started.catch((error: unknown) => this.fromError(request, error));
    if (throttles.length === 0) return replied;
    return replied.then((reply) => this.denied(request, throttles, reply));
  };

  /**
   * `dispatch` for a route whose middleware all have their synchronous form (no throttle among
   * them), from `checks[from]` on: the same answers as the chain (a check's reply or throw, else
   * the endpoint's), a promise only where a check or the endpoint gives one.
   */
  private checked(request: ApiRequest, compiled: Compiled, checks: MiddlewareCheck[], from: number): HttpReply | Promise<HttpReply> {
    try {
      for (let at = from; at < checks.length; at++) {
        const verdict = checks[at]!(request);
        if (verdict === undefined) continue;
        if (!(verdict instanceof Promise)) return verdict;
        return verdict.then(
          (reply) => reply ?? this.checked(request, compiled, checks, at + 1),
          (error: unknown) => this.fromError(request, error),
        );
      }
      const answer = this.answer(request, compiled);
      return answer instanceof Promise ? answer.catch((error: unknown) => this.fromError(request, error)) : answer;
    } catch (error) {
      return this.fromError(request, error);
    }
  }

  /** The endpoint's own answer, with a warning for each query parameter it does not take (never silently ignored). */
  private answer(request: ApiRequest, compiled: Compiled): HttpReply | Promise<HttpReply> {
    const answer = compiled.handler(request);
    const warnings = request.query === '' ? undefined : queryWarnings(compiled.route.name, request.query);
    if (warnings === undefined) return answer;
    return answer instanceof Promise ? answer.then((r) => warned(r, warnings)) : warned(answer, warnings);
  }

  /** A 401/403 from a middleware before the throttle still counts (guessing tokens is throttled). */
  private denied(request: ApiRequest, throttles: ThrottleMiddleware[], reply: HttpReply): HttpReply {
    if (reply.status === 401 || reply.status === 403) for (const throttle of throttles) throttle.onDenied(request);
    return reply;
  }

  error(request: ApiRequest, status: number, message: string, headers?: Array<[string, string]>): HttpReply {
    return { status, headers, body: errorEnvelope(this.errorLinks(request), [{ message }]) };
  }

  private fromError(request: ApiRequest, error: unknown): HttpReply {
    // A 500 is a failure of ours, whatever threw it: its detail goes to the log under the request id.
    if (isAppError(error) && error.status !== 500) return { status: error.status, headers: error.headers, body: errorEnvelope(this.errorLinks(request), error.errors) };
    this.logger.error({ err: error, error_plugin: pluginOfError(error), requestId: request.id, method: request.method, path: request.path }, 'API request failed');
    return this.error(request, 500, 'Internal Server Error');
  }
}

/** A success answer with `meta.warnings` (the unknown query parameters). */
function warned(reply: HttpReply, warnings: string[]): HttpReply {
  return reply.status >= 200 && reply.status < 300 ? { ...reply, body: withWarnings(reply.body, warnings) } : reply;
}
