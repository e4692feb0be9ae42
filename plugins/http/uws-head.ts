import { headersFrozen } from './frozen-reply.js';
import { REQUEST_ID_PREFIX } from './request.js';

/**
 * The head of the answers of one body, laid out once in a buffer of its own:
 * `[room for the prefix and digits][\r\nETag: …\r\nContent-Type: …]`. The request number
 * is written right-aligned against the rest, with the id's prefix just before it (moved only
 * when the number gains a digit), so a request writes its digits and nothing else.
 */
interface Tail {
  /** The header names and values it was made from, in order (name, value, name, value...). */
  pairs: string[];
  /** The header list itself when frozen (a kept reply's, shared by every answer of it): the same object cannot differ. */
  frozen: ReadonlyArray<readonly [string, string]> | undefined;
  type: string;
  bytes: Buffer;
  /** Digits of the number the prefix is laid out for (0: not yet). */
  digits: number;
  /** The id and the rest, for numbers of `digits` digits. */
  view: Uint8Array;
}

/** Digits of the largest request number (Number.MAX_SAFE_INTEGER has 16). */
const MAX_DIGITS = 16;
/** A longer rest of a head takes the string path (and is not kept). */
const MAX_TAIL_BYTES = 2048;
const CRLF = '\r\n';
const PREFIX = Buffer.from(`${REQUEST_ID_PREFIX}-`, 'latin1');
/** Where the rest of the head starts in a tail's buffer. */
const REST = PREFIX.length + MAX_DIGITS;

/**
 * The value of the one header call a uWS reply makes (see `writeCorked`) as bytes, for a reply
 * whose body the transport has seen before: a reply-cache hit, a compressed body, an asset,
 * each the same Buffer every time (issue #33). The rest of the head after the request id
 * (`\r\nETag: …\r\nContent-Type: …`) is encoded once per body and kept beside it while the
 * body lives, with room before it for the id (see `Tail`). As a string, the value cost uWS a
 * UTF-8 length pass, an allocation and a copy, and the transport the id's text and the joins
 * and flattening of the head, on every request.
 *
 * uWS copies a header's bytes into its own buffer within the call, so the buffer is written
 * again by the next answer of the same body. The kept rest is checked against the reply's
 * headers before use (by identity for a frozen list, else the same strings): a reply whose
 * headers differ gets a new one.
 */
export class ReplyHeadBytes {
  private readonly tails = new WeakMap<object, Tail>();

  /**
   * The head's value for request number `sequence` answering with `body`, `headers` and
   * content `type`; undefined when the rest of the head is too long to keep (then the caller
   * builds the string).
   */
  value(sequence: number, body: object, headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): Uint8Array | undefined {
    let tail = this.tails.get(body);
    if (tail === undefined || tail.type !== type || (headers !== tail.frozen && !samePairs(tail.pairs, headers))) {
      tail = render(headers, type);
      if (tail === undefined) return undefined;
      this.tails.set(body, tail);
    }
    let digits = 1;
    for (let n = sequence; n >= 10; n = Math.floor(n / 10)) digits++;
    const bytes = tail.bytes;
    if (digits !== tail.digits) {
      const from = REST - digits - PREFIX.length;
      PREFIX.copy(bytes, from);
      tail.view = new Uint8Array(bytes.buffer, bytes.byteOffset + from, bytes.length - from);
      tail.digits = digits;
    }
    let at = REST;
    let n = sequence;
    do {
      bytes[--at] = 48 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
    return tail.view;
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

function render(headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): Tail | undefined {
  const rest = `${headerLines(headers)}${CRLF}Content-Type: ${type}`;
  const length = Buffer.byteLength(rest);
  if (length > MAX_TAIL_BYTES) return undefined;
  // Its own ArrayBuffer (not a slice of Node's pool, which other small Buffers share).
  const bytes = Buffer.allocUnsafeSlow(REST + length);
  bytes.write(rest, REST);
  const pairs = headers === undefined ? [] : headers.flat();
  const frozen = headers !== undefined && headersFrozen(headers) ? headers : undefined;
  return { pairs, frozen, type, bytes, digits: 0, view: bytes };
}
