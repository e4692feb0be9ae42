import { BadRequestError, isAppError, pluginOfError, type Hooks, type KernelConfig, type Logger } from '../../kernel/index.js';
import { Compressor } from './compression.js';
import type { HttpReply, HttpServer, InjectedRequest, ReadinessCheck, RouteHandler, StreamSink, TransportReplyDecorator } from './contracts.js';
import { assertPortFree, ListenError } from './listen.js';
import { TransportRequest } from './request.js';
import { Router } from './router.js';

/** A drain's grace ends this long after the last request began (a busy client sends more sooner). */
const QUIET_MS = 50;

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The transport's own error body, shaped like the API envelope so clients parse one format. */
export function errorBody(message: string): string {
  return `{"errors":[${JSON.stringify({ message })}],"links":{},"meta":{},"data":null}`;
}

/** Methods some route of the product may serve. Anything else is 501 (RFC 9110 §15.6.2), never a silent drop. */
export const KNOWN_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * A method name read off a socket, as the literal the code compares it with when it is one
 * of ours. uWS hands a fresh string per request: every `=== 'GET'` compared it character by
 * character and every Set or Map lookup hashed it again; the literal compares by identity
 * and carries its hash. One comparison, picked by the first letter.
 */
export function knownMethod(name: string): string {
  switch (name.charCodeAt(0)) {
    case 71:
      return name === 'GET' ? 'GET' : name;
    case 72:
      return name === 'HEAD' ? 'HEAD' : name;
    case 80:
      return name === 'POST' ? 'POST' : name === 'PUT' ? 'PUT' : name === 'PATCH' ? 'PATCH' : name;
    case 68:
      return name === 'DELETE' ? 'DELETE' : name;
    case 79:
      return name === 'OPTIONS' ? 'OPTIONS' : name;
    default:
      return name;
  }
}

/**
 * What both transports share: the router and its 404/405/OPTIONS answers, `/healthz` and
 * `/readyz`, error replies, in-flight accounting and the draining shutdown. A transport
 * subclass only reads requests off its socket library and writes replies back, so the
 * two cannot drift in anything but wire details (tested by one suite run on both).
 */
export abstract class HttpServerCore implements HttpServer {
  abstract readonly transport: string;
  abstract readonly native: boolean;
  /** Why `auto` serves on node:http instead of native uWebSockets.js (for the boot line). */
  fallbackReason: string | undefined;
  protected readonly router = new Router<RouteHandler>();
  protected boundPort = 0;
  protected draining = false;
  protected readonly debug: boolean;
  private readonly checks = new Map<string, ReadinessCheck>();
  private decorator: TransportReplyDecorator | null = null;
  private closing: Promise<void> | null = null;
  private active = 0;
  /** Compresses answers for clients that accept it (every reply passes `prepare`). */
  private readonly compressor: Compressor;
  /** Requests begun so far: a drain is quiet once a short while passes without one (see `graceful`). */
  private begun = 0;
  private idleWaiters: Array<() => void> = [];
  /** Listeners of `request.handled` (read per request: see `Hooks.watch`). */
  private readonly handledListeners: { readonly length: number };

  constructor(
    protected readonly config: KernelConfig,
    protected readonly logger: Logger,
    protected readonly hooks: Hooks,
  ) {
    this.debug = logger.isLevelEnabled('debug');
    this.handledListeners = hooks.watch('request.handled');
    this.compressor = new Compressor(config.http.compression);
    this.route(['GET'], '/healthz', () => ({ status: 200, body: '{"status":"ok"}' }));
    this.route(['GET'], '/readyz', () => this.readiness());
  }

  get host(): string {
    return this.config.http.host;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.boundPort}`;
  }

  get inFlight(): number {
    return this.active;
  }

  route(method: string | string[], pattern: string, handler: RouteHandler): void {
    this.router.add(method, pattern, handler);
  }

  addReadinessCheck(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  /** Pages named in the boot banner, by name (paths; `links` makes them absolute). */
  private readonly announced = new Map<string, string>();

  announce(name: string, path: string): void {
    this.announced.set(name, path);
  }

  /** The announced pages as absolute URLs (the `listening` line's `links`). */
  get links(): Record<string, string> {
    return Object.fromEntries([...this.announced].map(([name, path]) => [name, `${this.url}${path}`]));
  }

  get maxBufferedBytes(): number {
    return this.config.http.stream_buffer_bytes;
  }

  async inject(input: InjectedRequest): Promise<HttpReply> {
    const headers = Object.assign(Object.create(null) as Record<string, string>, input.headers ?? {});
    const request = new InjectedTransportRequest(input.method, input.path, input.query ?? '', headers, false, performance.now(), false, undefined);
    request.peer = input.ip ?? '';
    if (input.locals !== undefined) Object.assign(request.locals, input.locals);
    try {
      return await this.dispatch(request);
    } catch (error) {
      return this.errorReply(error, request);
    }
  }

  setTransportReplyDecorator(decorator: TransportReplyDecorator | null): void {
    this.decorator = decorator;
  }

  /** Bind and start accepting. Port 0 picks a free one. */
  abstract listen(): Promise<void>;

  /**
   * The port to bind, after probing it with a plain exclusive socket: a clear error for a
   * busy port or a bad host (uWS binds with SO_REUSEPORT and would "succeed" on a busy
   * port), or a free port instead of a busy one when `http.port_fallback` is on.
   */
  protected async portToBind(): Promise<number> {
    const { host, port, port_fallback: fallback } = this.config.http;
    try {
      await assertPortFree(host, port);
      return port;
    } catch (error) {
      if (!fallback || port === 0 || !(error instanceof ListenError) || error.code !== 'EADDRINUSE') throw error;
      this.logger.warn({ port }, `port ${port} on ${host} is in use: listening on a free port instead`);
      return 0;
    }
  }
  /** Stop accepting new connections; open ones stay, to be told `Connection: close` on their next answer. */
  protected abstract stopAccepting(): void;
  /** Close every remaining connection. */
  protected abstract closeConnections(): void;
  /** HTTP connections still open, when the transport can tell (undefined: it cannot, uWS). */
  protected openConnections(): number | undefined {
    return undefined;
  }

  /** Stop accepting, let in-flight requests finish (up to the timeout), then close every connection. */
  close(timeoutMs = this.config.http.shutdown_timeout_ms): Promise<void> {
    this.closing ??= this.doClose(timeoutMs);
    return this.closing;
  }

  private async doClose(timeoutMs: number): Promise<void> {
    if (this.boundPort === 0) return;
    this.draining = true;
    this.stopAccepting();
    await this.graceful(Math.min(timeoutMs, this.config.http.shutdown_grace_ms));
    if (this.active > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (this.active > 0) this.logger.warn({ inFlight: this.active }, 'shutdown timeout: closing requests still in flight');
    }
    this.closeConnections();
  }

  /**
   * The grace of a drain: a keep-alive client cannot know the server chose this instant to
   * close, so a request it sends on an open connection now is still answered, with
   * `Connection: close` (every answer of a draining server carries it), and the connection
   * closes after that answer. The grace ends once no connection is open (where the transport
   * can count them), or no request has begun for QUIET_MS, or after `graceMs`.
   */
  private async graceful(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    let seen = this.begun;
    let quietSince = Date.now();
    while (Date.now() < deadline) {
      if (this.openConnections() === 0) return;
      if (this.begun !== seen) {
        seen = this.begun;
        quietSince = Date.now();
      } else if (this.active === 0 && Date.now() - quietSince >= QUIET_MS) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  private async readiness(): Promise<HttpReply> {
    const results: Record<string, boolean> = {};
    const details: Record<string, Record<string, unknown>> = {};
    let ready = !this.draining;
    for (const [name, check] of this.checks) {
      let ok = false;
      try {
        const answer = await check();
        if (typeof answer === 'boolean') ok = answer;
        else {
          ok = answer.ready === true;
          if (answer.details !== undefined && Object.keys(answer.details).length > 0) details[name] = answer.details;
        }
      } catch (error) {
        this.logger.warn({ err: error, check: name }, 'readiness check failed');
      }
      results[name] = ok;
      if (!ok) ready = false;
    }
    const body: Record<string, unknown> = { status: ready ? 'ready' : 'not ready', checks: results };
    if (Object.keys(details).length > 0) body.details = details;
    return { status: ready ? 200 : 503, body: JSON.stringify(body) };
  }

  /** Count a request in (its reply or abort counts it out through `finish`). */
  protected begin(): void {
    this.active++;
    this.begun++;
  }

  /** Route a request whose head was read; the reply may come later (a rejection is the caller's to answer with `errorReply`). */
  protected dispatch(request: TransportRequest): HttpReply | Promise<HttpReply> {
    const method = request.method;
    try {
      if (!KNOWN_METHODS.has(method)) {
        return KNOWN_METHODS.has(method.toUpperCase())
          ? this.transportReply(request, 400, `Method names are case-sensitive: send ${method.toUpperCase()}, not ${method}.`)
          : this.transportReply(request, 501, `The ${method.slice(0, 32)} method is not implemented by this server.`);
      }
      if (request.path.length + request.query.length > this.config.http.max_url) {
        return this.transportReply(request, 414, `The request URL is longer than the limit of ${this.config.http.max_url} characters.`);
      }
      const match = this.router.match(method, request.path, decodePathSegment);
      if (match === undefined) return this.transportReply(request, 404, 'Not Found');
      if (match.value === undefined) {
        const allow: Array<[string, string]> = [['Allow', match.allow.join(', ')]];
        if (method === 'OPTIONS') return { status: 204, headers: allow };
        return this.transportReply(request, 405, `The ${method} method is not supported on this path.`, allow);
      }
      request.params = match.params;
      request.route = match.pattern;
      // A rejected promise is turned into an error reply by the transport (one promise per request).
      return match.value(request);
    } catch (error) {
      return this.errorReply(error, request);
    }
  }

  /** Route a request and hand its reply (or the error reply of a failure) to `send`. */
  protected respond(request: TransportRequest, send: (reply: HttpReply) => void): void {
    this.deliver(request, this.dispatch(request), send);
  }

  /** Hand a dispatch result (or the error reply of its failure), made ready to send, to `send`, now or once it settles. */
  protected deliver(request: TransportRequest, result: HttpReply | Promise<HttpReply>, send: (reply: HttpReply) => void): void {
    const ready = (reply: HttpReply): void => {
      const prepared = this.prepare(request, reply);
      if (prepared instanceof Promise) void prepared.then(send);
      else send(prepared);
    };
    if (result instanceof Promise) result.then(ready, (error: unknown) => ready(this.errorReply(error, request)));
    else ready(result);
  }

  /** The last step before a reply is written: compression for a client that takes it (off the loop for a large body). */
  protected prepare(request: TransportRequest, reply: HttpReply): HttpReply | Promise<HttpReply> {
    return this.compressor.compress(request, reply);
  }

  /**
   * An answer the transport decides itself (404, 405, 413, 408, 431...). The API may
   * decorate it (CORS headers, envelope links) so it is a real answer like any other.
   */
  protected transportReply(request: TransportRequest, status: number, message: string, headers?: Array<[string, string]>): HttpReply {
    const reply: HttpReply = { status, body: errorBody(message) };
    if (headers !== undefined) reply.headers = headers;
    if (this.decorator === null) return reply;
    try {
      return this.decorator(request, reply);
    } catch (error) {
      this.logger.warn({ err: error, requestId: request.id }, 'transport reply decorator failed');
      return reply;
    }
  }

  protected errorReply(error: unknown, request: TransportRequest): HttpReply {
    // A 500 is a failure of ours, whatever threw it: its detail goes to the log, never to the client.
    if (isAppError(error) && error.status !== 500) {
      const reply: HttpReply = { status: error.status, body: `{"errors":${JSON.stringify(error.errors)},"links":{},"meta":{},"data":null}` };
      if (error.headers !== undefined) reply.headers = error.headers;
      return reply;
    }
    this.logger.error({ err: error, error_plugin: pluginOfError(error), requestId: request.id, method: request.method, path: request.path }, 'request failed');
    return { status: 500, body: errorBody('Internal Server Error') };
  }

  /** Count a request out (once), emit `request.handled`, wake a draining close. */
  protected finish(request: TransportRequest, status = 0): void {
    if (request.counted) return;
    request.counted = true;
    request.finished = true;
    this.active--;
    if (this.debug || this.handledListeners.length > 0) {
      const durationMs = performance.now() - request.startedAt;
      if (this.debug) this.logger.debug({ requestId: request.id, method: request.method, path: request.path, status, durationMs, aborted: request.aborted }, 'request');
      if (this.handledListeners.length > 0) {
        void this.hooks.notify('request.handled', { method: request.method, path: request.path, route: request.route, status, durationMs }, (error, plugin) =>
          this.logger.warn({ err: error, listener_plugin: plugin }, 'request.handled listener failed'),
        );
      }
    }
    if (this.active === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}

/** A request with no socket (HttpServer.inject). */
class InjectedTransportRequest extends TransportRequest {
  peer = '';

  protected remoteAddress(): string {
    return this.peer;
  }
}

/**
 * The sink of a streamed reply over a transport's write function. `write` returns false
 * while the client lags; once more than `limit` bytes wait, the next write drops the connection (`drop`: the
 * socket is closed at once, not ended politely behind what already waits, which a client
 * that does not read would never take), so it is never buffered without bound and never
 * holds a connection open.
 */
export class TransportSink implements StreamSink {
  closed = false;
  private listeners: Array<() => void> = [];

  constructor(
    private readonly io: { write(chunk: string | Uint8Array): boolean; buffered(): number; end(): void; drop(): void },
    private readonly limit: number,
  ) {}

  get buffered(): number {
    return this.closed ? 0 : this.io.buffered();
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.closed) return false;
    // Checked before writing: one change larger than the limit still reaches a client that
    // reads; what waits beyond the limit from earlier writes means the client does not.
    if (this.io.buffered() > this.limit) {
      this.drop();
      return false;
    }
    return this.io.write(chunk);
  }

  drop(): void {
    if (this.closed) return;
    this.closed = true;
    this.io.drop();
    this.markClosed();
  }

  end(): void {
    if (this.closed) return;
    this.io.end();
    this.markClosed();
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }

  /** The client went away (or the stream ended): tell the listeners once. */
  markClosed(): void {
    if (this.closed && this.listeners.length === 0) return;
    this.closed = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

/** A raw `:param` path segment, percent-decoded; malformed encoding is the client's 400. */
export function decodePathSegment(raw: string): string {
  if (raw.indexOf('%') === -1) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestError(`Malformed percent-encoding in the path segment "${raw.slice(0, 50)}".`);
  }
}
