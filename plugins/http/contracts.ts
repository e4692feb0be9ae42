/**
 * The transport's public shapes, the same for both transports (uWebSockets.js and
 * node:http). A handler receives an HttpRequest whose method, path, query and headers
 * were copied synchronously (uWebSockets.js' request object dies at the first await),
 * and returns an HttpReply that the transport writes in one go.
 */

export interface HttpRequest {
  /** The method as sent (`GET`, `POST`...). */
  readonly method: string;
  /** Path without the query string, as sent (percent-encoded), one trailing slash removed. */
  readonly path: string;
  /** Raw query string without the `?` ('' when none). */
  readonly query: string;
  /** Request headers by lower-case name (repeated headers joined with ", "); null prototype. */
  readonly headers: Readonly<Record<string, string>>;
  /** Route parameters (`:name` segments), percent-decoded. */
  params: Record<string, string>;
  /** Milliseconds timestamp (performance.now()) when the request arrived. */
  readonly startedAt: number;
  /**
   * This request's id: sent back as `X-Request-Id` on every answer and logged with any
   * failure, so an operator finds the details a client never sees. A trusted proxy's
   * (`http.trust_proxy`) well-formed `X-Request-Id` is kept.
   */
  readonly id: string;
  /** Client address; the rightmost `X-Forwarded-For` hop when `http.trust_proxy` is on. */
  readonly ip: string;
  /** True once the client went away; the transport then drops any reply. */
  readonly aborted: boolean;
  /** True when the request announced a body (Content-Length > 0 or Transfer-Encoding). */
  readonly hasBody: boolean;
  /** The body bytes (empty when none). Over `http.max_body` the transport answers 413 itself. */
  body(): Promise<Buffer>;
  /**
   * The body parsed as a flat JSON object or a form (`a[b]=c`, `a[]=x`), or undefined
   * when empty. 400 on malformed JSON, non-object JSON or `__proto__`-like keys; 415 on
   * any other content type.
   */
  parsedBody(): Promise<Record<string, unknown> | undefined>;
  /** Add a header to whatever reply this request gets (CORS, rate-limit headers...). */
  setResponseHeader(name: string, value: string): void;
  /** Per-request state shared by middleware and handlers (e.g. `user` after auth). */
  readonly locals: Record<string, unknown>;
}

export interface HttpReply {
  status: number;
  /** Content-Type of the body; default `application/json; charset=utf-8`. */
  type?: string;
  /** Extra headers (name, value). */
  headers?: Array<[string, string]>;
  /** Omitted for 204/304; for HEAD the transport sends only the headers. */
  body?: string | Uint8Array;
}

export type RouteHandler = (request: HttpRequest) => HttpReply | Promise<HttpReply>;

/**
 * What a readiness check may say besides yes or no: `details` are shown under
 * `details.<check>` in `/readyz` (a degraded stream, a failing webhook endpoint, an index
 * build's progress), so an operator sees a problem that does not take the node out.
 */
export interface ReadinessReport {
  ready: boolean;
  details?: Record<string, unknown>;
}

/** A readiness check for `/readyz`: true (or `{ ready: true }`) when ready. */
export type ReadinessCheck = () => boolean | ReadinessReport | Promise<boolean | ReadinessReport>;

export interface HttpServer {
  /** `http://<host>:<port>` once listening (port resolved when 0 was asked). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** `uWebSockets.js <package>@<version>` or `node:http`: what serves the requests. */
  readonly transport: string;
  /** True on the native uWebSockets.js transport. */
  readonly native: boolean;
  /**
   * Register a route. `method` is a method, a list, or `*` for any. `pattern` is an
   * absolute path whose segments may be `:name` parameters; a final `*` segment matches
   * any rest of the path (a prefix route: the longest prefix wins, exact routes first).
   * HEAD is served by the GET handler when no HEAD handler is given; OPTIONS answers 204
   * with `Allow` when no handler is given; a known path with another method answers 405.
   */
  route(method: string | string[], pattern: string, handler: RouteHandler): void;
  /** Add a check to `/readyz` (all must pass). */
  addReadinessCheck(name: string, check: ReadinessCheck): void;
  /** Requests being handled right now. */
  readonly inFlight: number;
  /**
   * Let the API shape answers the transport decides itself (404, 405, 408, 413, 431...):
   * CORS headers and envelope links, so they are real answers like any other.
   */
  setTransportReplyDecorator(decorator: TransportReplyDecorator | null): void;
}

/** Returns the reply to send (it may add headers or replace the body); must not throw or await. */
export type TransportReplyDecorator = (request: HttpRequest, reply: HttpReply) => HttpReply;
