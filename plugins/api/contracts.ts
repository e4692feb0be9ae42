import type { DependencyContainer } from 'tsyringe';
import type { KernelConfig, Logger } from '../../kernel/index.js';
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
  /** The endpoint, or null for an unknown path, an unsupported method or OPTIONS. */
  endpoint: EndpointName | null;
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

/** A middleware: answer by itself (deny) or call `next()` and return (maybe decorate) its reply. */
export type Middleware = (request: ApiRequest, next: Next) => HttpReply | Promise<HttpReply>;

/** Class-style middleware (the gate is one): an object with `handle`. */
export interface MiddlewareHandler {
  handle(request: ApiRequest, next: Next): HttpReply | Promise<HttpReply>;
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

/** The API plugin's service: middleware, resource/endpoint middleware, envelope helpers. */
export interface ApiService {
  readonly middleware: MiddlewareRegistry;
  /** Middleware for every endpoint of a resource, on every interface (call before the API boots). */
  addResourceMiddleware(resource: ResourceName, ...specs: string[]): void;
  /** Middleware for one endpoint (the endpoint builder's `routeMiddleware()`). */
  addEndpointMiddleware(endpoint: EndpointName, ...specs: string[]): void;
  /** Drop middleware (by spec) inherited from the interface/resource for one endpoint (`withoutRouteMiddleware()`). */
  withoutEndpointMiddleware(endpoint: EndpointName, ...specs: string[]): void;
  /** An error reply in the API envelope (for middleware that deny). */
  errorReply(request: ApiRequest, status: number, message: string, headers?: Array<[string, string]>): HttpReply;
  /** `{scheme}://{host}` of the request: `http.base_url`, else the Host header (X-Forwarded-* with `http.trust_proxy`). */
  baseUrl(request: HttpRequest): string;
}
