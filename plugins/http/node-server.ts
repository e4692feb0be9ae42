import type * as http from 'node:http';
import type { Duplex } from 'node:stream';
import net, { type Socket } from 'node:net';
import type { WebSocket, WebSocketServer } from 'ws';
import { type Hooks, type KernelConfig, type Logger, nodeHttp } from '../../kernel/index.js';
import { BodyCollector } from './body-collector.js';
import { keepNodeHead, nodeHeadOf } from './frozen-reply.js';
import type { HttpReply } from './contracts.js';
import { listenError } from './listen.js';
import { announcesBody, arrivalTime, TransportRequest } from './request.js';
import { errorBody, HttpServerCore, JSON_TYPE, KNOWN_METHODS, TransportSink } from './server-core.js';
import { statusLine, statusText } from './status-text.js';


/**
 * Limits of the request head. They match what uWebSockets.js enforces (its defaults: a
 * 4 KiB head buffer per read, up to 100 headers... it closes the socket instead of
 * answering); here the client gets a 431 with the envelope. 16 KiB is node's default.
 */
export const MAX_HEAD_BYTES = 16 * 1024;
export const MAX_HEADERS = 100;

/**
 * A request head must be complete within this long, as on uWebSockets.js (it closes a
 * connection idle or stuck in its head after about 10 s). Node's own defaults (60 s, checked
 * every 30 s) kept a head sent one byte at a time open for 75 s and more: a cheap way to hold
 * sockets. Not configurable, so both transports answer alike.
 */
export const HEAD_TIMEOUT_MS = 10_000;
/** How often node looks for connections past those limits (its default, 30 s, is most of the slack). */
export const CONNECTIONS_CHECK_MS = 1_000;

/**
 * One header from node's raw list (`name` lower-case), as uWS gives it: repeats joined with
 * ", " (node's own `headers` would drop repeats of some names and make set-cookie an array).
 */
function rawHeader(raw: string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    if (key.length === name.length && key.toLowerCase() === name) value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}

class NodeTransportRequest extends TransportRequest {
  socket: Socket | null = null;
  /** node's raw header list (name, value, ...): read one by one, or all at once on first `headers`. */
  raw: string[] = [];

  protected override readHeader(name: string): string | undefined {
    return rawHeader(this.raw, name);
  }

  protected override readAllHeaders(): Record<string, string> {
    const raw = this.raw;
    const headers = Object.create(null) as Record<string, string>;
    for (let i = 0; i < raw.length; i += 2) {
      const key = raw[i]!.toLowerCase();
      const previous = headers[key];
      headers[key] = previous === undefined ? raw[i + 1]! : `${previous}, ${raw[i + 1]!}`;
    }
    return headers;
  }

  protected remoteAddress(): string {
    const address = this.socket?.remoteAddress ?? '';
    return address.startsWith('::ffff:') ? address.slice(7) : address;
  }
}

/**
 * The node:http transport: the same contract as the uWebSockets.js one (the shared core
 * routes, answers and drains), for Node versions and platforms without a native binary.
 * About half the speed of uWS on small replies (see benchmarks/README.md).
 */
export class NodeHttpServer extends HttpServerCore {
  readonly native = false;
  readonly transport = 'node:http';
  private server: http.Server | null = null;
  /** WebSockets on node:http (no native uWS): the `ws` package, attached to our own routing. */
  private sockets: WebSocketServer | null = null;
  /** Open HTTP connections (upgraded ones leave): a drain's grace ends early once there are none. */
  private readonly httpSockets = new Set<Socket>();

  constructor(config: KernelConfig, logger: Logger, hooks: Hooks) {
    super(config, logger, hooks);
  }

  async listen(): Promise<void> {
    const host = this.config.http.host;
    const port = await this.portToBind();
    const server = nodeHttp.createServer(
      {
        maxHeaderSize: MAX_HEAD_BYTES,
        keepAliveTimeout: 10_000,
        headersTimeout: HEAD_TIMEOUT_MS,
        // The whole request: its head, then its body within `http.body_timeout_ms` (whose own 408,
        // with the envelope, comes first; this is node's backstop, a second later).
        requestTimeout: HEAD_TIMEOUT_MS + this.config.http.body_timeout_ms + 1_000,
        connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      },
      (req, res) => this.onRequest(req, res),
    );
    // node truncates silently past maxHeadersCount: keep one more to tell "too many" apart.
    server.maxHeadersCount = MAX_HEADERS + 1;
    server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => this.onClientError(error, socket));
    server.on('connection', (socket: Socket) => {
      this.httpSockets.add(socket);
      socket.once('close', () => this.httpSockets.delete(socket));
    });
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      this.httpSockets.delete(socket as Socket);
      this.onUpgrade(req, socket, head);
    });
    // `ws` is loaded only by this transport (boot time: the native transport never needs it).
    const { WebSocketServer: Sockets } = await import('ws');
    this.sockets = new Sockets({ noServer: true, maxPayload: 64 * 1024 });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
      server.listen({ host, port, exclusive: true }, () => resolve());
    });
    const address = server.address();
    this.boundPort = typeof address === 'object' && address !== null ? address.port : port;
  }

  protected stopAccepting(): void {
    // net.Server's own close: stop listening, and leave the open connections alone (http.Server's
    // close also closes idle keep-alive connections at once, and a request a client sends on one
    // at that instant meets a reset). Each is told `Connection: close` on its next answer.
    if (this.server) net.Server.prototype.close.call(this.server);
  }

  protected override openConnections(): number | undefined {
    return this.httpSockets.size;
  }

  protected closeConnections(): void {
    for (const client of this.sockets?.clients ?? []) client.terminate();
    this.sockets?.close();
    this.sockets = null;
    this.server?.closeAllConnections();
    this.server = null;
  }

  /** A request with an `Upgrade` header: routed like any other; a reply with `upgrade` makes it a WebSocket. */
  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const request = this.readRequest(req);
    request.upgrade = (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
    this.begin();
    socket.once('close', () => {
      if (!request.finished) {
        request.aborted = true;
        this.finish(request);
      }
    });
    this.respond(request, (reply) => {
      if (request.finished || request.aborted) return;
      request.finished = true;
      const wss = this.sockets;
      if (reply.upgrade === undefined || !request.upgrade || wss === null) {
        const body = typeof reply.body === 'string' ? reply.body : reply.body === undefined ? '' : Buffer.from(reply.body).toString('utf8');
        const lines = [`HTTP/1.1 ${statusLine(reply.status)}`, `X-Request-Id: ${request.id}`];
        for (const [name, value] of [...(request.responseHeaders ?? []), ...(reply.headers ?? [])]) lines.push(`${name}: ${value}`);
        lines.push(`Content-Type: ${reply.type ?? JSON_TYPE}`, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close');
        socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
        this.finish(request, reply.status);
        return;
      }
      const accept = reply.upgrade;
      wss.handleUpgrade(req, socket, head, (ws: WebSocket) => this.openSocket(ws, accept));
      this.finish(request, 101);
    });
  }

  private openSocket(ws: WebSocket, accept: NonNullable<HttpReply['upgrade']>): void {
    const limit = this.maxBufferedBytes;
    let closed = false;
    const session = accept({
      send: (text) => {
        if (closed) return false;
        // A client that does not read is dropped at the limit, never buffered without bound.
        if (ws.bufferedAmount > limit) {
          ws.terminate();
          return false;
        }
        ws.send(text);
        return true;
      },
      get buffered() {
        return closed ? 0 : ws.bufferedAmount;
      },
      close: (code, reason) => {
        if (!closed) ws.close(code ?? 1000, reason ?? '');
      },
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) session.onMessage(data.toString());
    });
    ws.on('error', () => ws.terminate());
    ws.once('close', () => {
      closed = true;
      session.onClose();
    });
  }

  private readRequest(req: http.IncomingMessage): NodeTransportRequest {
    const method = req.method ?? 'GET';
    let url = req.url ?? '/';
    if (url.charCodeAt(0) !== 47) url = originForm(url);
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1);
    const query = q === -1 ? '' : url.slice(q + 1);
    // Headers are read from node's raw list when asked (a GET one asks two or three) instead of
    // building the whole object for every request (issue #33).
    const raw = req.rawHeaders;
    const hasBody = announcesBody(rawHeader(raw, 'content-length'), rawHeader(raw, 'transfer-encoding'));
    const trustProxy = this.config.http.trust_proxy;
    const request = new NodeTransportRequest(method, path, query, null, hasBody, arrivalTime(), trustProxy, trustProxy ? rawHeader(raw, 'x-request-id') : undefined);
    request.raw = raw;
    request.socket = req.socket;
    return request;
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const request = this.readRequest(req);
    this.begin();
    if (req.rawHeaders.length / 2 > MAX_HEADERS) {
      this.watchClose(res, request);
      this.fail(req, res, request, 431, `The request has more than ${MAX_HEADERS} headers.`);
      return;
    }
    if (!request.hasBody) {
      // A reply known at once (a cached GET) is written within this call, as on uWS: no close
      // watch (needed only by a reply that comes later or streams), no promise (issue #33).
      const result = this.dispatch(request);
      const prepared = result instanceof Promise ? result : this.prepare(request, result);
      if (!(prepared instanceof Promise) && prepared.stream === undefined) {
        this.send(res, request, prepared);
        return;
      }
      this.watchClose(res, request);
      if (!(prepared instanceof Promise)) this.send(res, request, prepared);
      else if (!(result instanceof Promise)) void prepared.then((reply) => this.send(res, request, reply));
      else this.deliver(request, result, (reply) => this.send(res, request, reply));
      return;
    }
    this.watchClose(res, request);
    if (!this.startBody(req, res, request, request.header('content-length'))) return;
    this.respond(request, (reply) => this.send(res, request, reply));
  }

  /** A reply still to come (or a stream) learns when the client goes away. */
  private watchClose(res: http.ServerResponse, request: NodeTransportRequest): void {
    res.once('close', () => {
      request.onAbort?.();
      if (!request.finished) {
        request.aborted = true;
        this.finish(request);
      }
    });
  }

  private startBody(req: http.IncomingMessage, res: http.ServerResponse, request: NodeTransportRequest, length: string | undefined): boolean {
    const body = BodyCollector.start(length, this.config.http.max_body, this.config.http.body_timeout_ms, (status, message) => this.fail(req, res, request, status, message));
    if (body === null) return false;
    request.bodyPromise = body.promise;
    req.on('data', (chunk: Buffer) => body.push(chunk));
    req.once('end', () => body.end());
    req.once('error', () => body.abort());
    res.once('close', () => body.abort());
    return true;
  }

  /** Answer at the transport level and close the connection: the rest of the body is never read. */
  private fail(req: http.IncomingMessage, res: http.ServerResponse, request: NodeTransportRequest, status: number, message: string): void {
    if (request.finished || request.aborted) return;
    this.write(res, request, this.transportReply(request, status, message), true);
    req.pause();
  }

  private send(res: http.ServerResponse, request: NodeTransportRequest, reply: HttpReply): void {
    if (request.finished || request.aborted) return;
    this.write(res, request, reply, this.draining);
  }

  private write(res: http.ServerResponse, request: NodeTransportRequest, reply: HttpReply, close: boolean): void {
    request.finished = true;
    const status = reply.status;
    const body = reply.body;
    const stream = reply.stream;
    if (body !== undefined && stream === undefined && request.responseHeaders === null && !close && status !== 204 && status !== 304) {
      // The common answer: a body and the reply's own headers (a cached GET's every time).
      const head = nodeHeadOf(reply) ?? this.headOf(reply, body);
      head[1] = request.id;
      res.writeHead(status, statusText(status), head);
      res.end(body);
      request.socket = null;
      this.finish(request, status);
      return;
    }
    // The transport's own names in lower case (issue #33): node lower-cases each name it is
    // given to look for the ones it manages, which for a mixed-case name made a new string per
    // header per request (~2% of a GET one). Names are case-insensitive (RFC 9110).
    const head: string[] = ['x-request-id', request.id];
    const extra = request.responseHeaders;
    if (extra !== null) for (const [name, value] of extra) head.push(name, value);
    const headers = reply.headers;
    if (headers !== undefined) for (const [name, value] of headers) head.push(name, value);
    if (close) head.push('connection', 'close');
    if (stream !== undefined && request.method !== 'HEAD') {
      head.push('content-type', reply.type ?? JSON_TYPE);
      res.writeHead(status, statusText(status), head);
      res.flushHeaders();
      const sink = new TransportSink({ write: (chunk) => res.write(chunk), buffered: () => res.writableLength, end: () => res.end(), drop: () => res.destroy() }, this.maxBufferedBytes);
      request.onAbort = () => sink.markClosed();
      queueMicrotask(() => stream(sink));
    } else if (status === 204 || status === 304 || body === undefined) {
      if (status !== 204 && status !== 304) head.push('content-length', '0');
      res.writeHead(status, statusText(status), head);
      res.end();
    } else {
      head.push(...contentHeaders(reply, body));
      res.writeHead(status, statusText(status), head);
      res.end(body);
    }
    request.socket = null;
    this.finish(request, status);
  }

  /**
   * The header list of an answer with a body, slot 1 left for the request id: `x-request-id`,
   * the reply's headers, its type and length (names in lower case: see `write`). Kept inside a
   * reply that is handed out again and again (a reply-cache hit, kept by `freezeReply` with its
   * header list: `keepNodeHead`) and reused by each of its answers, which writes its own id into
   * slot 1 just before `writeHead` (node reads the list within that call and keeps nothing of
   * it): no list, no length text and no pass over the headers per request (issue #33). A reply
   * frozen any other way has no place for it, and its list is made per answer.
   */
  private headOf(reply: HttpReply, body: string | Uint8Array): string[] {
    const head: string[] = ['x-request-id', ''];
    const headers = reply.headers;
    if (headers !== undefined) for (const [name, value] of headers) head.push(name, value);
    head.push(...contentHeaders(reply, body));
    keepNodeHead(reply, head);
    return head;
  }

  /** A request node's parser refused before it became a request: answer it, never just drop it. */
  private onClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    let status = 400;
    let message = 'Malformed HTTP request.';
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      message = `The request head is larger than ${MAX_HEAD_BYTES} bytes.`;
    } else if (error.code === 'HPE_INVALID_METHOD') {
      const token = /^[^ \r\n]{1,32}/.exec(error.rawPacket?.toString('latin1') ?? '')?.[0] ?? '';
      if (KNOWN_METHODS.has(token.toUpperCase())) message = `Method names are case-sensitive: send ${token.toUpperCase()}, not ${token}.`;
      else [status, message] = [501, 'This request method is not implemented by this server.'];
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      [status, message] = [408, 'The request was not received in time.'];
    }
    const body = errorBody(message);
    socket.end(
      `HTTP/1.1 ${statusLine(status)}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}

/**
 * The content headers of an answer with a body: its type and its length in bytes. node drops
 * the body of a HEAD answer by itself; the length is the GET one's.
 */
function contentHeaders(reply: HttpReply, body: string | Uint8Array): string[] {
  return ['content-type', reply.type ?? JSON_TYPE, 'content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength)];
}

/** `http://host/path?q` (absolute-form, sent to proxies) to `/path?q`. */
function originForm(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return '/';
  }
}
