/**
 * The transport's public shapes, the same for both transports (uWebSockets.js and
 * node:http). A handler receives an HttpRequest whose method, path and query were copied
 * synchronously and whose headers stay readable for as long as its reply is to come
 * (uWebSockets.js' request object dies when its handler returns: see `header`), and
 * returns an HttpReply that the transport writes in one go.
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
  /**
   * One header by its lower-case name (as `headers[name]`). Cheaper than `headers` on
   * uWebSockets.js, which copies every header the first time `headers` is read; read the
   * headers you need while handling the request (not after its reply was sent).
   */
  header(name: string): string | undefined;
  /**
   * Route parameters (`:name` segments), percent-decoded. Frozen: one object is shared by the
   * requests of a path (the router remembers matches); replace it rather than edit it.
   */
  params: Record<string, string>;
  /**
   * The pattern of the route serving this request ('' while none matched): the transport's
   * (`/api/*`), refined by a router below it (the API's `/api/streams/:stream`). For
   * metrics and logs, which must never label by a raw URL.
   */
  route: string;
  /** Milliseconds timestamp (performance.now()) when the request arrived: the turn of the event loop that read it. */
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
  /** `locals[name]`, without making `locals` when nothing was put there yet (a check on every request stays free). */
  local(name: string): unknown;
  /** True for a WebSocket upgrade request (a reply with `upgrade` accepts it). */
  readonly upgrade: boolean;
}

/**
 * An answer. One may be shared and frozen (a cached GET's is the same object on every hit):
 * to change an answer, build a new one (`{ ...reply, headers: [...] }`), or add headers
 * with `request.setResponseHeader`.
 */
export interface HttpReply {
  status: number;
  /** Content-Type of the body; default `application/json; charset=utf-8`. */
  type?: string;
  /** Extra headers (name, value). */
  headers?: Array<[string, string]>;
  /** Omitted for 204/304; for HEAD the transport sends only the headers. */
  body?: string | Uint8Array;
  /**
   * A body written over time (Server-Sent Events) instead of `body`: the transport sends the
   * status and headers, then hands the open response to this function. The request counts
   * as handled from then on (a long-lived stream never holds up a draining shutdown).
   */
  stream?: (sink: StreamSink) => void;
  /** Accept a WebSocket upgrade request (`request.upgrade`) with this session; `status` is ignored. */
  upgrade?: WebSocketAccept;
}

/** An open streamed response (see HttpReply.stream). */
export interface StreamSink {
  /**
   * Write a chunk; false when the client is not keeping up (the chunk is buffered anyway).
   * Bytes written to many sinks (one event to every subscriber) are encoded once.
   */
  write(chunk: string | Uint8Array): boolean;
  /** Bytes written but not yet taken by the client. */
  readonly buffered: number;
  /** End the response. */
  end(): void;
  /** Close the connection at once, dropping what waits (a client that does not read would never take it). */
  drop(): void;
  /** Called once when the response ends, by `end` or because the client went away. */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

/** One WebSocket connection, on either transport. */
export interface WebSocketPeer {
  /** Send a text message; false when it could not be queued (the peer is then being dropped). */
  send(text: string): boolean;
  /** Bytes queued and not yet taken by the client. */
  readonly buffered: number;
  close(code?: number, reason?: string): void;
  /**
   * Native pub/sub (uWebSockets.js only; absent on node:http): receive every message
   * `HttpServer.publish` sends to `topic`, written by uWS itself to each subscriber.
   */
  subscribe?(topic: string): void;
  unsubscribe?(topic: string): void;
}

/** What a WebSocket session does with its peer's messages. */
export interface WebSocketSession {
  onMessage(text: string): void;
  onClose(): void;
}

export type WebSocketAccept = (peer: WebSocketPeer) => WebSocketSession;

/** A request routed without a socket (see HttpServer.inject). */
export interface InjectedRequest {
  method: string;
  path: string;
  query?: string;
  headers?: Record<string, string>;
  ip?: string;
  /** Copied into `request.locals` (the caller keeps the object to read what handlers left in it). */
  locals?: Record<string, unknown>;
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
  /**
   * Route a request without a socket, through the same routes and middleware as a real one
   * (no body): a WebSocket subscription asks "would this GET be allowed?" this way, so it
   * gets exactly the gate, auth and throttle answers a GET gets.
   */
  inject(request: InjectedRequest): Promise<HttpReply>;
  /** Largest number of bytes a streamed response or a WebSocket may have queued before it is dropped. */
  readonly maxBufferedBytes: number;
  /** Send a text message to every WebSocket subscribed to `topic` (native pub/sub; absent on node:http). */
  publish?(topic: string, text: string): void;
  /** Requests being handled right now. */
  readonly inFlight: number;
  /**
   * Let the API shape answers the transport decides itself (404, 405, 408, 413, 431...):
   * CORS headers and envelope links, so they are real answers like any other.
   */
  setTransportReplyDecorator(decorator: TransportReplyDecorator | null): void;
  /**
   * A page worth naming in the boot banner (`docs` → `/api/docs`, a control panel): the
   * `listening` line lists them as absolute URLs under `links`. Call in `register` or `boot`.
   */
  announce(name: string, path: string): void;
}

/** Returns the reply to send (it may add headers or replace the body); must not throw or await. */
export type TransportReplyDecorator = (request: HttpRequest, reply: HttpReply) => HttpReply;
