import { REQUEST_ID_PREFIX } from './request.js';

/** The rest of a head after the request id, encoded once for a body seen before. */
interface Tail {
  /** The header names and values it was made from, in order (name, value, name, value...). */
  pairs: string[];
  type: string;
  bytes: Buffer;
}

/** Room for the id and the rest of the head; a longer head takes the string path. */
const SCRATCH_BYTES = 2048;
const CRLF = '\r\n';

/**
 * The value of the one header call a uWS reply makes (see `writeCorked`) as bytes, for a reply
 * whose body the transport has seen before: a reply-cache hit, a compressed body, an asset,
 * each the same Buffer every time (issue #33). The request number's digits go into a scratch
 * buffer that already holds the id's prefix, then the rest of the head
 * (`\r\nETag: …\r\nContent-Type: …`), encoded once per body and kept beside it while the body
 * lives. As a string, the value cost uWS a UTF-8 length pass, an allocation and a copy, and the
 * transport the id's text and the joins and flattening of the head, on every request.
 *
 * uWS copies a header's bytes into its own buffer within the call, so one scratch buffer
 * serves every request. The kept tail is checked against the reply's headers (the same
 * strings, usually the very same objects) before use: a reply whose headers differ gets a new one.
 */
export class ReplyHeadBytes {
  // Its own ArrayBuffer (not a slice of Node's pool): the views below start at 0.
  private readonly scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);
  /** Where the number starts: after `${REQUEST_ID_PREFIX}-`. */
  private readonly start: number;
  /** A view of the scratch buffer's first n bytes, by n (at most SCRATCH_BYTES of them). */
  private readonly views: Array<Uint8Array | undefined> = [];
  private readonly tails = new WeakMap<object, Tail>();

  constructor() {
    this.start = this.scratch.write(`${REQUEST_ID_PREFIX}-`, 0, 'latin1');
  }

  /**
   * The head's value for request number `sequence` answering with `body`, `headers` and
   * content `type`; undefined when it does not fit the scratch buffer (then the caller builds
   * the string).
   */
  value(sequence: number, body: object, headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): Uint8Array | undefined {
    let tail = this.tails.get(body);
    if (tail === undefined || tail.type !== type || !samePairs(tail.pairs, headers)) {
      tail = render(headers, type);
      this.tails.set(body, tail);
    }
    let digits = 1;
    for (let n = sequence; n >= 10; n = Math.floor(n / 10)) digits++;
    const length = this.start + digits + tail.bytes.length;
    if (length > SCRATCH_BYTES) return undefined;
    const scratch = this.scratch;
    let at = this.start + digits;
    let n = sequence;
    do {
      scratch[--at] = 48 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
    scratch.set(tail.bytes, this.start + digits);
    return (this.views[length] ??= new Uint8Array(scratch.buffer, scratch.byteOffset, length));
  }
}

function samePairs(pairs: string[], headers: ReadonlyArray<readonly [string, string]> | undefined): boolean {
  const count = headers === undefined ? 0 : headers.length;
  if (pairs.length !== 2 * count) return false;
  for (let i = 0; i < count; i++) {
    const [name, value] = headers![i]!;
    if (pairs[2 * i] !== name || pairs[2 * i + 1] !== value) return false;
  }
  return true;
}

/**
 * Header lines as uWS writes them after the first header's value (see `writeCorked`): each
 * after its own CRLF. The one spelling of them, for the string path and for the bytes here.
 */
export function headerLines(headers: ReadonlyArray<readonly [string, string]> | null | undefined): string {
  let text = '';
  if (headers) for (const [name, value] of headers) text += `${CRLF}${name}: ${value}`;
  return text;
}

function render(headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): Tail {
  const pairs = headers === undefined ? [] : headers.flat();
  return { pairs, type, bytes: Buffer.from(`${headerLines(headers)}${CRLF}Content-Type: ${type}`) };
}
