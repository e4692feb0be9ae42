import type { HttpResponse, HttpRequest as UwsRequest, TemplatedApp, us_listen_socket, us_socket_context_t, WebSocket } from 'uws-pack';
import { type Hooks, type KernelConfig, type Logger } from '../../kernel/index.js';
import { BodyCollector } from './body-collector.js';
import type { HttpReply, WebSocketAccept, WebSocketSession } from './contracts.js';
import { ListenError } from './listen.js';
import { announcesBody, arrivalTime, TransportRequest } from './request.js';
import { contentTypeLine, headerLines, headLead, ReplyHeadBytes } from './uws-head.js';
import { HttpServerCore, JSON_TYPE, knownMethod, TransportSink } from './server-core.js';
import type { NativeUws } from './uws-loader.js';

const decoder = new TextDecoder();
/**
 * Text as uWS reads it fastest: bytes in an ArrayBuffer of their own. A string is encoded
 * again into a temporary buffer on every call; a Buffer costs uWS two more V8 calls than its
 * ArrayBuffer (which view, where in it).
 */
function bytesOf(text: string): ArrayBuffer {
  const encoded = Buffer.from(text);
  return encoded.buffer.slice(encoded.byteOffset, encoded.byteOffset + encoded.byteLength) as ArrayBuffer;
}
/** Header names as bytes: the first 64 names used (ours and an addon's few); any further one stays a string. */
const headerNames = new Map<string, ArrayBuffer>();
function headerName(name: string): ArrayBuffer | string {
  let bytes = headerNames.get(name);
  if (bytes === undefined) {
    if (headerNames.size >= 64) return name;
    headerNames.set(name, (bytes = bytesOf(name)));
  }
  return bytes;
}
const CONTENT_LENGTH = headerName('content-length');
const TRANSFER_ENCODING = headerName('transfer-encoding');

/** A GET or HEAD: its body is looked for only when asked (see `readRequest`). */
function bodyAskedLater(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** What a WebSocket carries from its upgrade to its close. */
interface SocketData {
  accept: WebSocketAccept;
  session?: WebSocketSession;
  closed?: boolean;
}

class UwsTransportRequest extends TransportRequest {
  res: HttpResponse | null = null;
  collector: BodyCollector | null = null;
  /** uWS' request: alive only while the route handler runs (see `release`). */
  req: UwsRequest | null = null;
  /** Headers read one by one while `req` was alive, as name, value pairs ('' for absent, as uWS answers). */
  private read: string[] | null = null;

  /**
   * While the handler of a GET or HEAD runs (`onRequest`): its body was not looked for before,
   * and uWS can still hand it over if the handler asks for it.
   */
  bodyLater = false;
  /** `onAborted` was registered (once per response). */
  watched = false;

  constructor(
    private readonly server: UwsHttpServer,
    method: string,
    path: string,
    query: string,
    hasBody: boolean | undefined,
    trustProxy: boolean,
    req: UwsRequest,
  ) {
    super(method, path, query, null, hasBody, arrivalTime(), trustProxy, trustProxy ? req.getHeader('x-request-id') : undefined);
    this.req = req;
  }

  override body(): Promise<Buffer> {
    if (this.bodyLater && this.bodyPromise === null && this.res !== null && this.hasBody) this.server.readBodyLate(this.res, this);
    return super.body();
  }

  protected remoteAddress(): string {
    return this.res === null ? '' : decoder.decode(this.res.getRemoteAddressAsText());
  }

  protected override readHeader(name: string): string | undefined {
    const req = this.req;
    if (req === null) return this.headers[name];
    // A handful at most (Host, If-None-Match...): a scan beats a Map.
    const read = (this.read ??= []);
    let at = 0;
    while (at < read.length && read[at] !== name) at += 2;
    if (at === read.length) read.push(name, req.getHeader(headerName(name)));
    const value = read[at + 1]!;
    return value === '' ? undefined : value;
  }

  protected override readAllHeaders(): Record<string, string> {
    const headers = Object.create(null) as Record<string, string>;
    if (this.req !== null) {
      this.req.forEach((key, value) => {
        const previous = headers[key];
        headers[key] = previous === undefined ? value : `${previous}, ${value}`;
      });
    } else if (this.read !== null) {
      // Answered within the handler's call without anyone asking for every header: what was read is what remains.
      for (let at = 0; at < this.read.length; at += 2) if (this.read[at + 1] !== '') headers[this.read[at]!] = this.read[at + 1]!;
    }
    return headers;
  }

  /**
   * Called before the route handler returns: a reply still to come may read any header
   * later, so they are all copied now; `req` is dead after this.
   */
  release(): void {
    if (!this.finished) void this.headers;
    this.req = null;
  }
}

/**
 * The uWebSockets.js transport: one catch-all uWS route feeding the shared router, bodies
 * read with a size cap and a slow-body timeout, replies written in one cork.
 * uWS rules that bite: read everything from `req` before returning (stack-allocated),
 * `onAborted` before any async work, copy each `onData` chunk, cork writes after awaits.
 */
export class UwsHttpServer extends HttpServerCore {
  readonly native = true;
  readonly transport: string;
  private app: TemplatedApp | null = null;
  private listenSocket: us_listen_socket | null = null;
  private readonly uws: NativeUws['uws'];
  private readonly heads = new ReplyHeadBytes();

  constructor(native: NativeUws, config: KernelConfig, logger: Logger, hooks: Hooks) {
    super(config, logger, hooks);
    this.uws = native.uws;
    this.transport = native.label;
  }

  async listen(): Promise<void> {
    const host = this.config.http.host;
    const port = await this.portToBind();
    const app = this.uws.App();
    // WebSocket upgrades are routed like any request (so the API's gate and middleware run
    // on them); a reply with `upgrade` accepts one. Clients that stop reading are closed at
    // the buffer limit by uWS itself, without slowing anyone else.
    app.ws<SocketData>('/*', {
      maxPayloadLength: 64 * 1024,
      maxBackpressure: this.maxBufferedBytes,
      closeOnBackpressureLimit: true,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.onUpgrade(res, req, context),
      open: (ws) => {
        const data = ws.getUserData();
        data.session = data.accept({
          send: (text) => !data.closed && ws.send(text, false, false) !== 2,
          get buffered() {
            return data.closed ? 0 : ws.getBufferedAmount();
          },
          close: (code, reason) => {
            if (!data.closed) ws.end(code ?? 1000, reason ?? '');
          },
          subscribe: (topic) => {
            if (!data.closed) ws.subscribe(topic);
          },
          unsubscribe: (topic) => {
            if (!data.closed) ws.unsubscribe(topic);
          },
        });
      },
      message: (ws, message) => ws.getUserData().session?.onMessage(decoder.decode(message)),
      close: (ws: WebSocket<SocketData>) => {
        const data = ws.getUserData();
        data.closed = true;
        data.session?.onClose();
      },
    });
    app.any('/*', (res, req) => this.onRequest(res, req));
    this.app = app;
    await new Promise<void>((resolve, reject) => {
      app.listen(host, port, (socket) => {
        if (!socket) {
          reject(new ListenError(`cannot listen on ${host}:${port}`));
          return;
        }
        this.listenSocket = socket;
        this.boundPort = this.uws.us_socket_local_port(socket);
        resolve();
      });
    });
  }

  /** One message to every subscriber of `topic`, fanned out by uWS (backpressure limits apply per socket). */
  publish(topic: string, text: string): void {
    this.app?.publish(topic, text, false, false);
  }

  protected stopAccepting(): void {
    if (this.listenSocket) {
      this.uws.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
  }

  protected closeConnections(): void {
    this.app?.close();
    this.app = null;
  }

  private onUpgrade(res: HttpResponse, req: UwsRequest, context: us_socket_context_t): void {
    const request = this.readRequest(res, req);
    request.upgrade = true;
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    this.begin();
    res.onAborted(() => {
      request.aborted = true;
      request.res = null;
      this.finish(request);
    });
    this.respond(request, (reply) => {
      if (request.finished || request.aborted) return;
      if (reply.upgrade === undefined) return this.write(res, request, reply, true);
      request.finished = true;
      const data: SocketData = { accept: reply.upgrade };
      // An upgrade decided after an await is made from a turn of its own, and not corked.
      // - Its own turn: an accept whose await another request settled runs at the end of that
      //   request's uWS callback (uWS parsing that socket, holding it corked); upgrading there
      //   aborted the process ("Cork buffer must not be held across event loop iterations!").
      // - Not corked: with this uWS build, `res.cork(() => res.upgrade(...))` now and then closed
      //   the new socket at once, inside the cork (1006, no message ever handled; about 1 in 5
      //   under CPU load). uWS prints a warning line per uncorked upgrade; a lost socket is worse.
      // test/http/websocket-upgrade.test.ts holds the first; the access suite's uWS change-feed
      // cases under CPU load showed the second. docs/decisions.md, "CI follow-up: WebSocket upgrades".
      setImmediate(() => {
        if (request.aborted) return;
        res.upgrade(data, key, protocol, extensions, context);
        request.res = null;
        this.finish(request, 101);
      });
    });
    request.release();
  }

  /** Method, path and query now (`req` is stack-allocated); headers while the handler runs (see `release`). */
  private readRequest(res: HttpResponse, req: UwsRequest): UwsTransportRequest {
    const method = knownMethod(req.getCaseSensitiveMethod());
    let path = req.getUrl();
    if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1);
    const query = req.getQuery() ?? '';
    // A GET or HEAD looks for a body only when something asks (issue #33): two header reads
    // fewer on the commonest request, ~2% of a GET one. Answered at once, its body (if any)
    // is skipped by uWS, whose idle timeout still closes a connection whose body never ends.
    const hasBody = bodyAskedLater(method) ? undefined : announcesBody(req.getHeader(CONTENT_LENGTH), req.getHeader(TRANSFER_ENCODING));
    const request = new UwsTransportRequest(this, method, path, query, hasBody, this.config.http.trust_proxy, req);
    request.res = res;
    return request;
  }

  private onRequest(res: HttpResponse, req: UwsRequest): void {
    const request = this.readRequest(res, req);
    this.begin();
    // Known already for any other method: no header read here.
    if (bodyAskedLater(request.method) || !request.hasBody) {
      // A reply known at once (a cached GET) is written within this call: no abort watch
      // (uWS needs one only for a reply written after the handler returns), no promise.
      request.bodyLater = true;
      const result = this.dispatch(request);
      const prepared = result instanceof Promise ? result : this.prepare(request, result);
      if (!(prepared instanceof Promise)) {
        // A streamed reply outlives this call: it needs the abort watch after all.
        if (prepared.stream !== undefined) this.watchAbort(res, request);
        this.send(res, request, prepared);
      } else {
        // The reply comes later: the body, if any, is read now, while uWS can still hand it over
        // (unless a 413 answered it already, reading it within the handler).
        if (!request.finished) {
          if (request.bodyPromise === null && request.hasBody) this.readBodyLate(res, request);
          else this.watchAbort(res, request);
        }
        if (!(result instanceof Promise)) {
          // Ready, but compressed off the loop (a large body): written once that is done.
          void prepared.then((reply) => this.send(res, request, reply));
        } else {
          this.deliver(request, result, (reply) => this.send(res, request, reply));
        }
      }
      request.bodyLater = false;
    } else {
      this.watchAbort(res, request);
      if (this.startBody(res, request, request.header('content-length'))) this.respond(request, (reply) => this.send(res, request, reply));
    }
    request.release();
  }

  /** The body of a GET or HEAD asked for within its handler's call: read as any body is (size cap, slow-body timeout). */
  readBodyLate(res: HttpResponse, request: UwsTransportRequest): void {
    request.bodyLater = false;
    this.watchAbort(res, request);
    this.startBody(res, request, request.header('content-length'));
  }

  private watchAbort(res: HttpResponse, request: UwsTransportRequest): void {
    if (request.watched) return;
    request.watched = true;
    res.onAborted(() => {
      request.aborted = true;
      request.res = null;
      request.collector?.abort();
      request.onAbort?.();
      this.finish(request);
    });
  }

  /** Start reading the body now (chunks arrive right after this handler returns). False when already answered. */
  private startBody(res: HttpResponse, request: UwsTransportRequest, length: string | undefined): boolean {
    const body = BodyCollector.start(length, this.config.http.max_body, this.config.http.body_timeout_ms, (status, message) => this.fail(res, request, status, message));
    if (body === null) return false;
    request.bodyPromise = body.promise;
    request.collector = body;
    res.onData((chunk, isLast) => {
      // The ArrayBuffer is neutered when this callback returns: copy it.
      body.push(Buffer.from(chunk.slice(0)));
      if (isLast) body.end();
    });
    return true;
  }

  /** Answer at the transport level and close the connection: the rest of the body is never read. */
  private fail(res: HttpResponse, request: UwsTransportRequest, status: number, message: string): void {
    if (request.finished || request.aborted) return;
    this.write(res, request, this.transportReply(request, status, message), true);
  }

  private send(res: HttpResponse, request: UwsTransportRequest, reply: HttpReply): void {
    if (request.finished || request.aborted) return;
    this.write(res, request, reply, this.draining);
  }

  private write(res: HttpResponse, request: UwsTransportRequest, reply: HttpReply, close: boolean): void {
    request.finished = true;
    // Within the route handler's own call uWS has the socket corked already.
    if (request.req !== null) this.writeCorked(res, request, reply, close);
    else res.cork(() => this.writeCorked(res, request, reply, close));
    if (reply.stream === undefined) request.res = null;
    this.finish(request, reply.status);
  }

  private writeCorked(res: HttpResponse, request: UwsTransportRequest, reply: HttpReply, close: boolean): void {
    const status = reply.status;
    // The status line and every header in one native call (issue #33): uWS writes
    // `HTTP/1.1 ` + the status given + CRLF, so the status carries the header lines, each after
    // its own CRLF (uws-head.ts). A call per header cost a V8-to-C++ crossing and a string
    // conversion each, most of what set the product apart from a bare server sending only the body.
    const body = reply.body;
    if (body !== undefined && typeof body !== 'string' && reply.stream === undefined && status !== 204 && status !== 304 && request.method !== 'HEAD' && request.responseHeaders === null && request.sequence !== 0) {
      // A body sent before (a cached GET): the head as bytes, without a string (uws-head.ts).
      const head = this.heads.of(reply, body, request.sequence, reply.type ?? JSON_TYPE);
      if (head !== undefined) {
        res.writeStatus(head);
        res.end(body, close);
        return;
      }
    }
    const head = `${headLead(status)}${request.id}${headerLines(request.responseHeaders)}${headerLines(reply.headers)}`;
    if (reply.stream !== undefined && request.method !== 'HEAD') {
      res.writeStatus(`${head}${contentTypeLine(reply.type ?? JSON_TYPE)}`);
      this.openStream(res, request, reply.stream);
    } else if (status === 204 || status === 304 || body === undefined) {
      res.writeStatus(status !== 204 && status !== 304 ? `${head}\r\nContent-Length: 0` : head);
      // endWithoutBody(undefined, close) would write a bogus Content-Length: no close flag here
      // (these replies are tiny; a draining server closes its connections at the end anyway).
      res.endWithoutBody();
    } else if (request.method === 'HEAD') {
      // endWithoutBody(n) leaves uWS waiting for n bytes; write the length ourselves.
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
      res.writeStatus(`${head}${contentTypeLine(reply.type ?? JSON_TYPE)}\r\nContent-Length: ${length}`);
      res.endWithoutBody();
    } else {
      res.writeStatus(`${head}${contentTypeLine(reply.type ?? JSON_TYPE)}`);
      res.end(body, close);
    }
  }

  /** Hand the open response to a streamed reply (inside the cork that wrote its head). */
  private openStream(res: HttpResponse, request: UwsTransportRequest, stream: NonNullable<HttpReply['stream']>): void {
    // uWS keeps what it could not send; the bytes waiting are counted from the failed write
    // until the socket drains (onWritable).
    let waiting = 0;
    const sink = new TransportSink(
      {
        write: (chunk) => {
          let ok = false;
          res.cork(() => (ok = res.write(chunk)));
          if (!ok) waiting += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
          return ok;
        },
        buffered: () => waiting,
        end: () => {
          if (request.res !== null) res.cork(() => res.end());
          request.res = null;
        },
        drop: () => {
          if (request.res !== null) res.close();
          request.res = null;
        },
      },
      this.maxBufferedBytes,
    );
    res.onWritable(() => {
      waiting = 0;
      return true;
    });
    request.onAbort = () => sink.markClosed();
    // Write the head now: a stream may stay silent for a while.
    res.write('');
    queueMicrotask(() => stream(sink));
  }
}
