import type { HttpReply } from './contracts.js';
import { keepUwsHead, uwsHeadOf } from './frozen-reply.js';
import { REQUEST_ID_PREFIX } from './request.js';
import { statusLine } from './status-text.js';

/**
 * The head of the answers of one body, laid out once in a buffer of its own:
 * `[status line, CRLF, X-Request-Id: prefix-][digits][\r\nETag: …\r\nContent-Type: …]`. A
 * request writes its number's digits and nothing else; the buffer is laid out again only when
 * the number gains a digit.
 */
interface Tail {
  status: number;
  /** Bytes before the digits: the status line and the id's header name and prefix (`leadOf`). */
  lead: number;
  /** The header names and values it was made from, in order (name, value, name, value...). */
  pairs: string[];
  type: string;
  /** What follows the digits: the headers and the content type. */
  rest: Buffer;
  /** Digits of the numbers `buffer` is laid out for (0: not yet). */
  digits: number;
  /** The whole head for numbers of `digits` digits (an ArrayBuffer: uWS reads it with one call fewer than a view). */
  buffer: ArrayBuffer;
  /** `buffer`, to write the digits into. */
  bytes: Uint8Array;
}

/** The buffer of a head not laid out yet (`digits` 0), shared: never written. */
const UNLAID = new Uint8Array(0);
/** A longer rest of a head takes the string path (and is not kept). */
const MAX_TAIL_BYTES = 2048;
const CRLF = '\r\n';
/** What comes before the digits of a head, by status. */
const leads = new Map<number, Buffer>();
function leadOf(status: number): Buffer {
  let lead = leads.get(status);
  // Statuses are three digits: at most 900 of these.
  if (lead === undefined) leads.set(status, (lead = Buffer.from(`${headLead(status)}${REQUEST_ID_PREFIX}-`, 'latin1')));
  return lead;
}

/**
 * The start of every uWS head: the status line, then the request id's header name. uWS writes
 * `HTTP/1.1 ` + what `writeStatus` is given + CRLF, so the one call writes the status line
 * and every header after it, each after its own CRLF (see `writeCorked`).
 */
export function headLead(status: number): string {
  return `${statusLine(status)}${CRLF}X-Request-Id: `;
}

/**
 * A head buffer shared by the kept replies of one status, content type and length of header
 * lines, for request numbers of one digit count: `[lead][digits][lines][\r\nContent-Type: …]`.
 * Each answer copies its reply's lines in (unless the last answer was of the same reply) and
 * writes its digits.
 */
interface Slot {
  status: number;
  type: string;
  digits: number;
  /** Length of the header lines it has room for. */
  size: number;
  buffer: ArrayBuffer;
  bytes: Uint8Array;
  /** Where the digits end and the lines begin. */
  at: number;
  /** The lines copied in last (by identity). */
  lines: Uint8Array | null;
}

/** A kept reply whose head is too long to keep: the string path, every time. */
const TOO_LONG = new Uint8Array(0);
/** Shared head buffers at most (one per status, type, lines length and digit count in use). */
const MAX_SLOTS = 256;

/**
 * The head of a uWS reply as bytes (what its one `writeStatus` call is given: see
 * `writeCorked`), for a reply whose body the transport has seen before: a reply-cache hit, a
 * compressed body, an asset, each the same Buffer every time (issue #33). Everything but the
 * request number is encoded once per body and kept beside it while the body lives. As a
 * string, the head cost uWS a UTF-8 length pass, an allocation and a copy, and the transport
 * the id's text and the joins and flattening of the head, on every request.
 *
 * uWS copies the bytes into its own buffer within the call, so a buffer is written again by
 * the next answer. A kept reply (`freezeReply`: the reply cache's) keeps only its header lines,
 * inside itself, and is answered through a buffer shared with the other kept replies of its
 * status, type and lines length (`Slot`): a buffer of its own per reply was memory outside V8's
 * heap (its backing store, reference-counted by uWS on every read) for each of the many keys
 * read in turn, and GET one ran 4.6% faster without it (side by side, issue #33). Any other
 * reply's head is kept beside its body (`Tail`) and checked against the reply's status, type
 * and header strings before use: a reply whose head differs gets a new one.
 */
export class ReplyHeadBytes {
  private readonly tails = new WeakMap<object, Tail>();
  private readonly slots = new Map<string, Slot>();
  /** The slot used last: most answers in a row share one. */
  private last: Slot | undefined;

  /**
   * The head for request number `sequence` answering `reply` with `body` (its body sent
   * before) in content `type`; undefined when the head is too long to keep (then the caller
   * builds the string).
   */
  of(reply: HttpReply, body: object, sequence: number, type: string): ArrayBuffer | undefined {
    let lines = uwsHeadOf(reply);
    if (lines === undefined) return this.value(reply.status, sequence, body, reply.headers, type);
    if (lines === null) keepUwsHead(reply, (lines = linesOf(reply.headers, type)));
    if (lines === TOO_LONG) return undefined;
    const status = reply.status;
    const digits = digitsOf(sequence);
    let slot = this.last;
    if (slot === undefined || slot.status !== status || slot.digits !== digits || slot.size !== lines.length || slot.type !== type) slot = this.slotFor(status, type, digits, lines.length);
    if (slot.lines !== lines) {
      slot.bytes.set(lines, slot.at);
      slot.lines = lines;
    }
    writeDigits(slot.bytes, slot.at, sequence);
    return slot.buffer;
  }

  private slotFor(status: number, type: string, digits: number, size: number): Slot {
    const key = `${status} ${digits} ${size} ${type}`;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      if (this.slots.size >= MAX_SLOTS) this.slots.clear();
      const lead = leadOf(status);
      const typeLine = Buffer.from(contentTypeLine(type));
      const at = lead.length + digits;
      const buffer = new ArrayBuffer(at + size + typeLine.length);
      const bytes = new Uint8Array(buffer);
      bytes.set(lead, 0);
      bytes.set(typeLine, at + size);
      slot = { status, type, digits, size, buffer, bytes, at, lines: null };
      this.slots.set(key, slot);
    }
    return (this.last = slot);
  }

  /**
   * The head for request number `sequence` answering `status` with `body`, `headers` and
   * content `type`, kept beside the body; undefined when the head is too long to keep (then
   * the caller builds the string).
   */
  value(status: number, sequence: number, body: object, headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): ArrayBuffer | undefined {
    let tail = this.tails.get(body);
    if (tail === undefined || tail.status !== status || tail.type !== type || !samePairs(tail.pairs, headers)) {
      tail = render(status, headers, type);
      if (tail === undefined) return undefined;
      this.tails.set(body, tail);
    }
    const digits = digitsOf(sequence);
    if (digits !== tail.digits) layOut(tail, digits);
    writeDigits(tail.bytes, tail.lead + digits, sequence);
    return tail.buffer;
  }
}

/**
 * A kept reply's header lines as bytes, in an array of their own: a short one (64 bytes or
 * fewer: an ETag's line) lies inside the array object, one place in memory with it.
 */
function linesOf(headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): Uint8Array {
  const lines = Buffer.from(headerLines(headers));
  if (lines.length + Buffer.byteLength(contentTypeLine(type)) > MAX_TAIL_BYTES) return TOO_LONG;
  return new Uint8Array(lines);
}

/** How many decimal digits `n` has (a positive integer). */
function digitsOf(n: number): number {
  let digits = 1;
  for (let limit = 10; n >= limit && digits < 16; limit *= 10) digits++;
  return digits;
}

/** The decimal digits of `n` into `bytes`, ending before `end`. */
function writeDigits(bytes: Uint8Array, end: number, n: number): void {
  // Below 2^31 in 32-bit integers, which V8 divides by 10 with a multiplication (a request
  // number passes 2^31 after two billion requests); above, in doubles.
  if (n <= 0x7fffffff) {
    let small = n | 0;
    do {
      const next = (small / 10) | 0;
      bytes[--end] = 48 + small - next * 10;
      small = next;
    } while (small > 0);
    return;
  }
  do {
    bytes[--end] = 48 + (n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
}

/** A new buffer for numbers of `digits` digits: the lead, room for them, the rest. */
function layOut(tail: Tail, digits: number): void {
  const lead = leadOf(tail.status);
  tail.lead = lead.length;
  const buffer = new ArrayBuffer(lead.length + digits + tail.rest.length);
  const bytes = new Uint8Array(buffer);
  bytes.set(lead, 0);
  bytes.set(tail.rest, lead.length + digits);
  tail.buffer = buffer;
  tail.bytes = bytes;
  tail.digits = digits;
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
 * Header lines as uWS writes them after the status line (see `writeCorked`): each after its
 * own CRLF. The one spelling of them, for the string path and for the bytes here.
 */
export function headerLines(headers: ReadonlyArray<readonly [string, string]> | null | undefined): string {
  let text = '';
  if (headers) for (const [name, value] of headers) text += `${CRLF}${name}: ${value}`;
  return text;
}

/** The content type's line, the last of every head (after `headerLines`). */
export function contentTypeLine(type: string): string {
  return `${CRLF}Content-Type: ${type}`;
}

function render(status: number, headers: ReadonlyArray<readonly [string, string]> | undefined, type: string): Tail | undefined {
  const rest = Buffer.from(`${headerLines(headers)}${contentTypeLine(type)}`);
  if (rest.length > MAX_TAIL_BYTES) return undefined;
  const pairs = headers === undefined ? [] : headers.flat();
  // No digits yet: the first `value` lays the buffer out.
  return { status, lead: 0, pairs, type, rest, digits: 0, buffer: UNLAID.buffer as ArrayBuffer, bytes: UNLAID };
}
