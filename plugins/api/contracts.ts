import type { DependencyContainer } from 'tsyringe';
import type { KernelConfig, Logger, RegisterOptions } from '../../kernel/index.js';
import type { HttpReply, HttpRequest } from '../http/index.js';

export type ResourceName = 'streams' | 'entries';

export type EndpointName =
  | 'streams.index' | 'streams.store' | 'streams.show' | 'streams.update' | 'streams.patch' | 'streams.delete'
  | 'entries.index' | 'entries.store' | 'entries.show' | 'entries.update' | 'entries.patch' | 'entries.delete'
  | 'entries.query';

/** What the API knows about a request before middleware runs. */
export interface ApiRouteInfo {
  /** Name of the interface whose prefix matched. */
  interface: string;
  /** The interface prefix as a path (`/api`, or '' for the root). */
  prefix: string;
  /** The endpoint (a spec endpoint, or an ExtraEndpoint's name), or null for an unknown path, an unsupported method or OPTIONS. */
  endpoint: EndpointName | (string & {}) | null;
  resource: ResourceName | null;
  /** True for methods other than GET/HEAD/OPTIONS, and for the query endpoint (it can run criteria). */
  write: boolean;
  /** Methods served on the path (for `Allow`); empty for an unknown path. */
  allow: string[];
  /** Path without the leading slash (`api/streams/planets/entries`), as `gate_except` patterns see it. */
  relativePath: string;
  /** The resources this interface serves: links never point at routes it does not serve. */
  resources: readonly ResourceName[];
}

/** The transport request plus the API route information. */
export interface ApiRequest extends HttpRequest {
  readonly api: ApiRouteInfo;
}

export type Next = () => Promise<HttpReply>;

/**
 * The synchronous form of a middleware that only looks at the request (a gate, a header check):
 * `undefined` hands the request on, as `return next()` would; a reply answers it instead; a
 * promise of either decides later; a throw answers with the error. Where every middleware of a
 * route offers one, the API runs them in turn with no `next` and no promise per middleware, and a
 * reply the endpoint has at once (a cached GET) is written within its request's own call.
 */
export type MiddlewareCheck = (request: ApiRequest) => HttpReply | undefined | Promise<HttpReply | undefined>;

/**
 * A middleware: answer by itself (deny) or call `next()` and return (maybe decorate) its reply.
 * `check`, when set, must decide exactly as the function does (see `MiddlewareCheck`).
 */
export type Middleware = ((request: ApiRequest, next: Next) => HttpReply | Promise<HttpReply>) & { check?: MiddlewareCheck };

/** Class-style middleware (the gate is one): an object with `handle`. */
export interface MiddlewareHandler {
  handle(request: ApiRequest, next: Next): HttpReply | Promise<HttpReply>;
  /**
   * The same decision as `handle` without `next` (`MiddlewareCheck`): offer it when `handle` is
   * "answer, or hand on unchanged". Used only when declared beside `handle` (the same class), so
   * a subclass that overrides `handle` alone keeps its `handle` running.
   */
  check?(request: ApiRequest): HttpReply | undefined | Promise<HttpReply | undefined>;
}

export interface MiddlewareContext {
  /** Arguments after the colon: `throttle:60,1` gives ['60', '1']. */
  args: string[];
  /** The whole spec as written in the config (`throttle:60,1`). */
  spec: string;
  config: KernelConfig;
  container: DependencyContainer;
  logger: Logger;
}

/** Creates one middleware instance for one place in a pipeline (state such as rate counters lives in it). */
export type MiddlewareFactory = (context: MiddlewareContext) => Middleware | MiddlewareHandler;

export interface MiddlewareRegistry {
  /** Register a middleware by name (call in `register`). `replace` overrides an existing name (e.g. `api.gate`). */
  register(name: string, factory: MiddlewareFactory, options?: { replace?: boolean }): void;
  has(name: string): boolean;
  names(): string[];
  /** Instantiate `name` or `name:arg1,arg2`; a ConfigError when the name is unknown. */
  create(spec: string): Middleware;
}

/**
 * An endpoint a plugin adds under every interface prefix (e.g. `GET /openapi.json`): it runs
 * behind the interface's middleware group and gate like the spec's endpoints, and, when it
 * names a resource, only on interfaces serving that resource (with its resource middleware).
 */
export interface ExtraEndpoint {
  /** Unique name, shown as `request.api.endpoint` (e.g. `openapi.document`). */
  name: string;
  method: string;
  /** Path relative to the interface prefix (`/openapi.json`); `:name` segments are parameters. */
  pattern: string;
  resource?: ResourceName;
  /** Counts as a write for middleware (readonly...). */
  write?: boolean;
  handler: (request: ApiRequest) => Promise<HttpReply>;
  /**
   * How the live OpenAPI document shows it: an OpenAPI operation object (summary,
   * parameters, responses...). Error statuses are added by the document. A `:stream`
   * pattern is listed once per stream. Without it the endpoint is left out.
   */
  openapi?: Record<string, unknown>;
}

/** The API plugin's service: middleware, resource/endpoint middleware, envelope helpers. */
export interface ApiService {
  /** Add an endpoint under every interface (call in `register`, before the API boots). */
  addEndpoint(endpoint: ExtraEndpoint, options?: RegisterOptions): void;
  /** Every endpoint added so far (the OpenAPI document lists those that describe themselves). */
  extraEndpoints(): readonly ExtraEndpoint[];
  readonly middleware: MiddlewareRegistry;
  /** Middleware for every endpoint of a resource, on every interface (call before the API boots). */
  addResourceMiddleware(resource: ResourceName, ...specs: string[]): void;
  /** Middleware for one endpoint (the endpoint builder's `routeMiddleware()`). */
  addEndpointMiddleware(endpoint: EndpointName, ...specs: string[]): void;
  /**
   * The middleware that tells who calls (the access plugin's, issue #28), on every interface:
   * right before the first `auth.bearer` of the `api.middleware` group, else right before the
   * gate, so cors and throttle run first and the gate already knows the caller.
   */
  useIdentity(spec: string): void;
  /** What every API route runs first, as specs: the `api.middleware` group with the identity middleware in its place, then the gate (stream routes run it too). */
  groupSpecs(): string[];
  /** Drop middleware (by spec) inherited from the interface/resource for one endpoint (`withoutRouteMiddleware()`). */
  withoutEndpointMiddleware(endpoint: EndpointName, ...specs: string[]): void;
  /** An error reply in the API envelope (for middleware that deny). */
  errorReply(request: ApiRequest, status: number, message: string, headers?: Array<[string, string]>): HttpReply;
  /** `{scheme}://{host}` of the request: `http.base_url`, else the Host header (X-Forwarded-* with `http.trust_proxy`). */
  baseUrl(request: HttpRequest): string;
}
