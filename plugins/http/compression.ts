import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import type { HttpReply, HttpRequest } from './contracts.js';
import { freezeReply, headersFrozen } from './frozen-reply.js';

export interface CompressionSettings {
  enabled: boolean;
  /** Bodies smaller than this are sent as they are (GET one of a small entry stays below it). */
  threshold: number;
  /** Brotli quality (0-11): 4 compresses about as well as gzip 6, several times faster than 11. */
  brotli_quality: number;
  gzip_level: number;
}

/** Above this many bytes a body is compressed on the thread pool, never on the event loop. */
const SYNC_LIMIT = 64 * 1024;

const COMPRESSIBLE = /^(application\/(json|javascript|xml|[a-z0-9.+-]+\+json|[a-z0-9.+-]+\+xml)|text\/|image\/svg\+xml)/i;

type Encoding = 'br' | 'gzip';

/**
 * Compression of answers (`gzip`, `br`) for clients that accept it, on both transports:
 * bodies over a threshold, of a text type, not streamed, not already encoded. A body that
 * is answered again as the same object (a reply-cache hit, the OpenAPI document) keeps its
 * compressed bytes, so a cached GET is not compressed twice. The ETag stays the entry's: a
 * client's `If-Match` and `If-None-Match` mean the representation, whatever its encoding.
 */
export class Compressor {
  private readonly memo = new WeakMap<object, Partial<Record<Encoding, Buffer>>>();
  /**
   * The answers made from a frozen reply (a reply-cache hit, the same object every time), by
   * encoding: a hit is answered with the same object again, without the checks, the header
   * list and the reply copy, and a transport finds its headers unchanged by identity.
   */
  private readonly answers = new WeakMap<HttpReply, Partial<Record<Encoding | 'identity', HttpReply>>>();
  /** The last `Accept-Encoding` read and what it chose: a client sends the same one every time. */
  private lastAccept: string | undefined;
  private lastChoice: Encoding | undefined;

  constructor(private readonly settings: CompressionSettings) {}

  /** The reply to send: as it is, compressed now, or (large bodies) compressed off the loop. */
  compress(request: HttpRequest, reply: HttpReply): HttpReply | Promise<HttpReply> {
    const body = reply.body;
    if (body === undefined || !this.settings.enabled) return reply;
    // The cheap check first: most answers (GET one) are small.
    if ((typeof body === 'string' ? body.length : body.byteLength) < this.settings.threshold) return reply;
    const kept = this.answers.get(reply);
    if (kept !== undefined) {
      const answer = kept[this.encodingOf(request) ?? 'identity'];
      if (answer !== undefined) return answer;
    }
    if (reply.stream !== undefined || reply.status === 204 || reply.status === 304 || reply.status < 200) return reply;
    if (!COMPRESSIBLE.test(reply.type ?? 'application/json')) return reply;
    const headers = reply.headers ?? [];
    for (const [name] of headers) if (name.toLowerCase() === 'content-encoding') return reply;
    const vary: Array<[string, string]> = [...headers, ['Vary', 'Accept-Encoding']];
    const encoding = this.encodingOf(request);
    if (encoding === undefined) return this.keep(reply, 'identity', { ...reply, headers: vary });
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const remembered = typeof body === 'object' ? this.memo.get(body)?.[encoding] : undefined;
    const done = (compressed: Buffer): HttpReply => {
      if (typeof body === 'object') this.memo.set(body, { ...this.memo.get(body), [encoding]: compressed });
      return this.keep(reply, encoding, { ...reply, headers: [...vary, ['Content-Encoding', encoding]], body: compressed });
    };
    if (remembered !== undefined) return done(remembered);
    if (bytes.byteLength <= SYNC_LIMIT) return done(encoding === 'br' ? brotliCompressSync(bytes, this.brotliOptions(bytes)) : gzipSync(bytes, { level: this.settings.gzip_level }));
    return new Promise((resolve) => {
      const finish = (error: Error | null, compressed: Buffer): void => resolve(error ? reply : done(compressed));
      if (encoding === 'br') brotliCompress(bytes, this.brotliOptions(bytes), finish);
      else gzip(bytes, { level: this.settings.gzip_level }, finish);
    });
  }

  /** The encoding to answer `request` with (none for HEAD, whose answer has no body). */
  private encodingOf(request: HttpRequest): Encoding | undefined {
    if (request.method === 'HEAD') return undefined;
    const accept = request.header('accept-encoding');
    if (accept !== this.lastAccept) {
      this.lastChoice = chosen(accept);
      this.lastAccept = accept;
    }
    return this.lastChoice;
  }

  /** `answer` as the one for `reply` in `encoding`, frozen, when `reply` is frozen (see `answers`). */
  private keep(reply: HttpReply, encoding: Encoding | 'identity', answer: HttpReply): HttpReply {
    if (!Object.isFrozen(reply) || (reply.headers !== undefined && !headersFrozen(reply.headers))) return answer;
    const frozen = freezeReply(answer);
    const kept = this.answers.get(reply);
    if (kept === undefined) this.answers.set(reply, { [encoding]: frozen });
    else kept[encoding] = frozen;
    return frozen;
  }

  private brotliOptions(bytes: Uint8Array): { params: Record<number, number> } {
    return { params: { [constants.BROTLI_PARAM_QUALITY]: this.settings.brotli_quality, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength } };
  }
}

/** `br` when the client takes it, else `gzip`, else none (q=0 refuses; `*` takes either). */
export function chosen(acceptEncoding: string | undefined): Encoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding === '') return undefined;
  let br = false;
  let gz = false;
  let any = false;
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (q !== undefined && Number(q) === 0) continue;
    if (name === 'br') br = true;
    else if (name === 'gzip' || name === 'x-gzip') gz = true;
    else if (name === '*') any = true;
  }
  return br ? 'br' : gz || any ? 'gzip' : undefined;
}
