import net from 'node:net';
import { performance } from 'node:perf_hooks';
import uWS from 'uWebSockets.js';
import type { HttpResponse, HttpRequest as UwsRequest, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { AppError, BadRequestError, isAppError, type Hooks, type KernelConfig, type Logger } from '../../kernel/index.js';
import type { HttpReply, HttpServer, ReadinessCheck, RouteHandler } from './contracts.js';
import { TransportRequest } from './request.js';
import { Router } from './router.js';
import { statusLine } from './status-text.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_PARAMS = Object.freeze(Object.create(null) as Record<string, string>);

/** The transport's own error body, shaped like the API envelope so clients parse one format. */
export function errorBody(status: number, message: string): string {
  return `{"errors":[${JSON.stringify({ message })}],"links":{},"meta":{},"data":null}`;
}

function decodeParam(raw: string): string {
  if (raw.indexOf('%') === -1) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BadRequestError(`Malformed percent-encoding in the path segment "${raw.slice(0, 50)}".`);
  }
}

/**
 * The uWebSockets.js server: one catch-all uWS route feeding our router (so that 405
 * with Allow, HEAD and OPTIONS behave the same everywhere), bodies read with a size cap
 * and a slow-body timeout, replies written in one cork, and a draining shutdown.
 */
export class UwsHttpServer implements HttpServer {
  readonly native = typeof (uWS as unknown as { getParts?: unknown }).getParts === 'function';
  private readonly router = new Router<RouteHandler>();
  private readonly checks = new Map<string, ReadinessCheck>();
  private app: TemplatedApp | null = null;
  private listenSocket: us_listen_socket | null = null;
  private boundPort = 0;
  private draining = false;
  private closing: Promise<void> | null = null;
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly debug: boolean;

  constructor(
    private readonly config: KernelConfig,
    private readonly logger: Logger,
    private readonly hooks: Hooks,
  ) {
    this.debug = logger.isLevelEnabled('debug');
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

  private async readiness(): Promise<HttpReply> {
    const results: Record<string, boolean> = {};
    let ready = !this.draining;
    for (const [name, check] of this.checks) {
      let ok = false;
      try {
        ok = (await check()) === true;
      } catch (error) {
        this.logger.warn({ err: error, check: name }, 'readiness check failed');
      }
      results[name] = ok;
      if (!ok) ready = false;
    }
    return { status: ready ? 200 : 503, body: JSON.stringify({ status: ready ? 'ready' : 'not ready', checks: results }) };
  }

  /** Bind and start accepting. Port 0 picks a free port. */
  async listen(): Promise<void> {
    const { host, port } = this.config.http;
    // uWS binds with SO_REUSEPORT: a second server on a busy port "succeeds" and steals
    // half the connections (TOOLCHAIN gotcha 3). Probe with a plain socket first.
    if (port !== 0) await assertPortFree(host, port);
    const app = uWS.App();
    app.any('/*', (res, req) => this.onRequest(res, req));
    this.app = app;
    await new Promise<void>((resolve, reject) => {
      app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${host}:${port}`));
          return;
        }
        this.listenSocket = socket;
        this.boundPort = uWS.us_socket_local_port(socket as unknown as Parameters<typeof uWS.us_socket_local_port>[0]);
        resolve();
      });
    });
  }

  /** Stop accepting, let in-flight requests finish (up to the timeout), then close every connection. */
  close(timeoutMs = this.config.http.shutdown_timeout_ms): Promise<void> {
    this.closing ??= this.doClose(timeoutMs);
    return this.closing;
  }

  private async doClose(timeoutMs: number): Promise<void> {
    if (!this.app) return;
    this.draining = true;
    if (this.listenSocket) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
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
    (this.app as TemplatedApp & { close?: () => void }).close?.();
    this.app = null;
  }

  private onRequest(res: HttpResponse, req: UwsRequest): void {
    // Read everything from `req` now: it is stack-allocated and dies with this call.
    const method = req.getCaseSensitiveMethod();
    let path = req.getUrl();
    if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1);
    const query = req.getQuery() ?? '';
    const headers = Object.create(null) as Record<string, string>;
    req.forEach((key, value) => {
      const previous = headers[key];
      headers[key] = previous === undefined ? value : `${previous}, ${value}`;
    });
    const length = headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
    const request = new TransportRequest(method, path, query, headers, hasBody, performance.now(), res, this.config.http.trust_proxy, NO_PARAMS);
    this.active++;
    res.onAborted(() => {
      request.aborted = true;
      this.finish(request);
    });
    if (hasBody && !this.startBody(res, request, length)) return;

    let result: HttpReply | Promise<HttpReply>;
    try {
      const match = this.router.match(method, path, decodeParam);
      if (match === undefined) {
        result = { status: 404, body: errorBody(404, 'Not Found') };
      } else if (match.value === undefined) {
        result =
          method === 'OPTIONS'
            ? { status: 204, headers: [['Allow', match.allow.join(', ')]] }
            : { status: 405, headers: [['Allow', match.allow.join(', ')]], body: errorBody(405, `The ${method} method is not supported on this path.`) };
      } else {
        request.params = match.params;
        result = match.value(request);
      }
    } catch (error) {
      result = this.errorReply(error, request);
    }
    if (result instanceof Promise) {
      result.then(
        (reply) => this.send(res, request, reply),
        (error: unknown) => this.send(res, request, this.errorReply(error, request)),
      );
    } else {
      this.send(res, request, result);
    }
  }

  /** Start reading the body now (chunks arrive right after this handler returns). False when already answered. */
  private startBody(res: HttpResponse, request: TransportRequest, length: string | undefined): boolean {
    const max = this.config.http.max_body;
    if (length !== undefined) {
      const declared = Number(length);
      if (!Number.isInteger(declared) || declared < 0) {
        this.fail(res, request, 400, 'Invalid Content-Length header.');
        return false;
      }
      if (declared > max) {
        this.fail(res, request, 413, `The request body is larger than the limit of ${max} bytes.`);
        return false;
      }
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settle!: { resolve: (b: Buffer) => void; reject: (e: Error) => void };
    request.bodyPromise = new Promise<Buffer>((resolve, reject) => {
      settle = { resolve, reject };
    });
    // Nobody may ever ask for the body (a middleware denied first): never an unhandled rejection.
    request.bodyPromise.catch(() => undefined);
    const timer = setTimeout(() => {
      settle.reject(new AppError(408, 'The request body was not received in time.'));
      this.fail(res, request, 408, 'The request body was not received in time.');
    }, this.config.http.body_timeout_ms);
    res.onData((chunk, isLast) => {
      if (request.finished) return;
      size += chunk.byteLength;
      if (size > max) {
        clearTimeout(timer);
        settle.reject(new AppError(413, `The request body is larger than the limit of ${max} bytes.`));
        this.fail(res, request, 413, `The request body is larger than the limit of ${max} bytes.`);
        return;
      }
      // The ArrayBuffer is neutered when this callback returns: copy it.
      if (chunk.byteLength > 0) chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        clearTimeout(timer);
        settle.resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    });
    return true;
  }

  /** Answer at the transport level and close the connection: the rest of the body is never read. */
  private fail(res: HttpResponse, request: TransportRequest, status: number, message: string): void {
    if (request.finished || request.aborted) return;
    this.write(res, request, { status, body: errorBody(status, message) }, true);
  }

  private errorReply(error: unknown, request: TransportRequest): HttpReply {
    if (isAppError(error)) {
      return { status: error.status, body: `{"errors":${JSON.stringify(error.errors)},"links":{},"meta":{},"data":null}` };
    }
    this.logger.error({ err: error, method: request.method, path: request.path }, 'request failed');
    return { status: 500, body: errorBody(500, 'Internal Server Error') };
  }

  private send(res: HttpResponse, request: TransportRequest, reply: HttpReply): void {
    if (request.finished || request.aborted) return;
    this.write(res, request, reply, this.draining);
  }

  private write(res: HttpResponse, request: TransportRequest, reply: HttpReply, close: boolean): void {
    request.finished = true;
    const status = reply.status;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      const extra = request.responseHeaders;
      if (extra !== null) for (const [name, value] of extra) res.writeHeader(name, value);
      const headers = reply.headers;
      if (headers !== undefined) for (const [name, value] of headers) res.writeHeader(name, value);
      const body = reply.body;
      if (status === 204 || status === 304 || body === undefined) {
        if (status !== 204 && status !== 304) res.writeHeader('Content-Length', '0');
        // endWithoutBody(undefined, close) would write a bogus Content-Length: no close flag here
        // (these replies are tiny; a draining server closes its connections at the end anyway).
        res.endWithoutBody();
      } else {
        res.writeHeader('Content-Type', reply.type ?? JSON_TYPE);
        if (request.method === 'HEAD') {
          // endWithoutBody(n) leaves uWS waiting for n bytes; write the length ourselves.
          res.writeHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
          res.endWithoutBody();
        } else {
          res.end(body, close);
        }
      }
    });
    this.finish(request, status);
  }

  private finish(request: TransportRequest, status = 0): void {
    if (request.counted) return;
    request.counted = true;
    request.finished = true;
    this.active--;
    if (this.debug || this.hooks.has('request.handled')) {
      const durationMs = performance.now() - request.startedAt;
      if (this.debug) this.logger.debug({ method: request.method, path: request.path, status, durationMs, aborted: request.aborted }, 'request');
      if (this.hooks.has('request.handled')) {
        this.hooks
          .emit('request.handled', { method: request.method, path: request.path, status, durationMs })
          .catch((error: unknown) => this.logger.warn({ err: error }, 'request.handled listener failed'));
      }
    }
    if (this.active === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}

function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(new Error(error.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : `cannot listen on ${host}:${port}: ${error.message}`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
