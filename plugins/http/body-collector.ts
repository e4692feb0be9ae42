import { AppError } from '../../kernel/index.js';

/** How a transport answers a body problem itself (413, 408, 400) and stops reading. */
export type BodyFailure = (status: number, message: string) => void;

/**
 * The request body as both transports read it: the declared length checked first (a
 * 413 before a byte is read), then chunks counted against `max` (a 413 as soon as it is
 * exceeded: the rest is never buffered), and a 408 when the whole body has not arrived
 * within `timeoutMs`. `promise` is what `request.body()` returns.
 */
export class BodyCollector {
  readonly promise: Promise<Buffer>;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private done = false;
  private resolve!: (body: Buffer) => void;
  private reject!: (error: Error) => void;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly max: number,
    timeoutMs: number,
    private readonly fail: BodyFailure,
  ) {
    this.promise = new Promise<Buffer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Nobody may ever ask for the body (a middleware denied first): never an unhandled rejection.
    this.promise.catch(() => undefined);
    this.timer = setTimeout(() => this.stop(408, 'The request body was not received in time.'), timeoutMs);
  }

  /** Start collecting, or answer at once (and return null) when the declared length is invalid or too large. */
  static start(contentLength: string | undefined, max: number, timeoutMs: number, fail: BodyFailure): BodyCollector | null {
    if (contentLength !== undefined) {
      const declared = Number(contentLength);
      if (!Number.isInteger(declared) || declared < 0) {
        fail(400, 'Invalid Content-Length header.');
        return null;
      }
      if (declared > max) {
        fail(413, `The request body is larger than the limit of ${max} bytes.`);
        return null;
      }
    }
    return new BodyCollector(max, timeoutMs, fail);
  }

  /** Take one chunk (the caller copies it first when its memory is reused). */
  push(chunk: Buffer): void {
    if (this.done) return;
    this.size += chunk.byteLength;
    if (this.size > this.max) {
      this.stop(413, `The request body is larger than the limit of ${this.max} bytes.`);
      return;
    }
    if (chunk.byteLength > 0) this.chunks.push(chunk);
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size));
  }

  /** The connection went away: stop the timer (nobody will read the body). */
  abort(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.reject(new AppError(400, 'The client went away before sending the whole body.'));
  }

  private stop(status: number, message: string): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.reject(new AppError(status, message));
    this.fail(status, message);
  }
}
