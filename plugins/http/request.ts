import type { HttpResponse } from 'uWebSockets.js';
import type { HttpRequest } from './contracts.js';
import { parseBody } from './body-parser.js';

const decoder = new TextDecoder();
const EMPTY = Buffer.alloc(0);

/**
 * The transport's request object. Everything from uWebSockets.js' stack-allocated
 * request is copied in the constructor's caller before any await; the response
 * object is kept only to read the peer address lazily while the request is live.
 */
export class TransportRequest implements HttpRequest {
  params: Record<string, string>;
  aborted = false;
  /** Set once a reply was written (or the client went away). */
  finished = false;
  /** Set once the transport counted this request out of `inFlight`. */
  counted = false;
  readonly locals: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  responseHeaders: Array<[string, string]> | null = null;
  bodyPromise: Promise<Buffer> | null = null;
  private parsed: Promise<Record<string, unknown> | undefined> | null = null;
  private address: string | null = null;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: Record<string, string>,
    readonly hasBody: boolean,
    readonly startedAt: number,
    private readonly res: HttpResponse,
    private readonly trustProxy: boolean,
    emptyParams: Record<string, string>,
  ) {
    this.params = emptyParams;
  }

  get ip(): string {
    if (this.address !== null) return this.address;
    let ip = '';
    if (this.trustProxy) {
      const forwarded = this.headers['x-forwarded-for'];
      // The rightmost hop is the one our (trusted) proxy appended: the client as it saw
      // it. Anything left of it was sent by the client and could be anything.
      if (forwarded) ip = forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
    }
    if (!ip && !this.aborted && !this.finished) ip = decoder.decode(this.res.getRemoteAddressAsText());
    this.address = ip;
    return ip;
  }

  body(): Promise<Buffer> {
    return this.bodyPromise ?? Promise.resolve(EMPTY);
  }

  parsedBody(): Promise<Record<string, unknown> | undefined> {
    if (this.parsed === null) {
      this.parsed = this.hasBody ? this.body().then((bytes) => parseBody(this.headers['content-type'], bytes)) : Promise.resolve(undefined);
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
