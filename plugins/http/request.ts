import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { HttpRequest } from './contracts.js';
import { parseBody } from './body-parser.js';
import { NO_PARAMS } from './router.js';

const EMPTY = Buffer.alloc(0);
// Request ids: a per-process prefix and a counter (unique, cheap, no syscall per request).
/** What every request id made by this process starts with, before `-` and its number. */
export const REQUEST_ID_PREFIX = randomBytes(4).toString('hex');
let sequence = 0;
const FORWARDED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** When the requests read in this turn of the event loop arrived (-1: none read yet this turn). */
let turnArrival = -1;
const endTurn = (): void => {
  turnArrival = -1;
};

/**
 * The arrival time of a request read off a socket now (`startedAt`): one clock read per turn of
 * the event loop, shared by every request that turn reads (a GET one read the clock per request,
 * ~1% of it). The requests of one turn came in with one wake-up of the loop, so that is when
 * they arrived; one handled later in the turn waited for the others, and its duration says so.
 */
export function arrivalTime(): number {
  if (turnArrival < 0) {
    turnArrival = performance.now();
    setImmediate(endTurn);
  }
  return turnArrival;
}

/**
 * Whether a request's head announces a body: a `Content-Length` other than 0, or any
 * `Transfer-Encoding` (chunked). Absent headers are undefined or '' (as uWS answers).
 */
export function announcesBody(length: string | undefined, transferEncoding: string | undefined): boolean {
  return (length !== undefined && length !== '' && length !== '0') || (transferEncoding !== undefined && transferEncoding !== '');
}

/**
 * The request object both transports hand to handlers. Method, path and query are copied
 * from the socket library's request before the handler runs (uWebSockets.js' request object
 * is stack-allocated and dies when its handler returns). Headers may be read lazily, one by
 * one (`header`), while the transport's handler runs; a transport copies them all before it
 * returns when the reply is still to come (see `readAllHeaders`). The peer address is read
 * lazily because most requests never ask for it.
 */
export abstract class TransportRequest implements HttpRequest {
  params: Record<string, string>;
  route = '';
  aborted = false;
  /** Set once a reply was written (or the client went away). */
  finished = false;
  /** Set once the transport counted this request out of `inFlight`. */
  counted = false;
  /**
   * This request's number in the process, when its id is the one made here (0 when a trusted
   * proxy's id is kept): `${REQUEST_ID_PREFIX}-${sequence}`. The text is made only when `id`
   * is read (a transport may write the number's digits itself: see uws-head.ts).
   */
  readonly sequence: number;
  private idText: string | undefined;
  responseHeaders: Array<[string, string]> | null = null;
  /** Set by the transport on a WebSocket upgrade request. */
  upgrade = false;
  /** Told when the client goes away (a streamed response's sink listens here). */
  onAbort: (() => void) | null = null;
  bodyPromise: Promise<Buffer> | null = null;
  private parsed: Promise<Record<string, unknown> | undefined> | null = null;
  private ownLocals: Record<string, unknown> | null = null;
  private address: string | null = null;
  /** Every header, once read (given at once by transports that have them all anyway). */
  private allHeaders: Record<string, string> | null;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    headers: Record<string, string> | null,
    /** Whether a body was announced, or undefined when the transport reads that from the headers only if asked (`hasBody`). */
    private announced: boolean | undefined,
    readonly startedAt: number,
    private readonly trustProxy: boolean,
    /** The `X-Request-Id` header as received (kept only from a trusted proxy). */
    forwarded: string | undefined,
  ) {
    this.params = NO_PARAMS;
    this.allHeaders = headers;
    // A trusted proxy's id keeps one id across hops; a client's own is never trusted.
    if (!trustProxy) forwarded = undefined;
    if (forwarded !== undefined && FORWARDED_ID.test(forwarded)) {
      this.idText = forwarded;
      this.sequence = 0;
    } else {
      this.sequence = ++sequence;
    }
  }

  get id(): string {
    return (this.idText ??= `${REQUEST_ID_PREFIX}-${this.sequence}`);
  }

  /** Whether the request announced a body (`announcesBody`), from its headers the first time it is asked when the transport did not say. */
  get hasBody(): boolean {
    return (this.announced ??= announcesBody(this.header('content-length'), this.header('transfer-encoding')));
  }

  /** Made on first use: most requests (a GET through the default gate) never touch it. */
  get locals(): Record<string, unknown> {
    return (this.ownLocals ??= Object.create(null) as Record<string, unknown>);
  }

  local(name: string): unknown {
    return this.ownLocals === null ? undefined : this.ownLocals[name];
  }

  get headers(): Record<string, string> {
    return (this.allHeaders ??= this.readAllHeaders());
  }

  header(name: string): string | undefined {
    return this.allHeaders === null ? this.readHeader(name) : this.allHeaders[name];
  }

  /** Every header from the socket library (transports that pass them to the constructor never get here). */
  protected readAllHeaders(): Record<string, string> {
    return Object.create(null) as Record<string, string>;
  }

  /** One header from the socket library, while `allHeaders` was not needed yet. */
  protected readHeader(name: string): string | undefined {
    return this.headers[name];
  }

  /** The socket's peer address ('' once the connection is gone). */
  protected abstract remoteAddress(): string;

  get ip(): string {
    if (this.address !== null) return this.address;
    let ip = '';
    if (this.trustProxy) {
      const forwarded = this.header('x-forwarded-for');
      // The rightmost hop is the one our (trusted) proxy appended: the client as it saw
      // it. Anything left of it was sent by the client and could be anything.
      if (forwarded) ip = forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
    }
    if (!ip && !this.aborted && !this.finished) ip = this.remoteAddress();
    this.address = ip;
    return ip;
  }

  body(): Promise<Buffer> {
    return this.bodyPromise ?? Promise.resolve(EMPTY);
  }

  parsedBody(): Promise<Record<string, unknown> | undefined> {
    if (this.parsed === null) {
      this.parsed = this.hasBody ? this.body().then((bytes) => parseBody(this.header('content-type'), bytes)) : Promise.resolve(undefined);
    }
    return this.parsed;
  }

  setResponseHeader(name: string, value: string): void {
    if (this.responseHeaders === null) this.responseHeaders = [];
    const lower = name.toLowerCase();
    const index = this.responseHeaders.findIndex(([n]) => n.toLowerCase() === lower);
    if (index >= 0) this.responseHeaders[index] = [name, value];
    else this.responseHeaders.push([name, value]);
  }
}
