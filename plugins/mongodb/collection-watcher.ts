import type { ChangeStream, ChangeStreamDocument, ChangeStreamOptions, Collection, Document, ResumeToken } from 'mongodb';
import { backoffDelay, type Logger } from '../../kernel/index.js';
import { cannotResume, changeStreamsUnsupported, codeOf } from './errors.js';

/** What a cache over a collection needs to hear (Source.watchStore). */
export type StoreEvent = 'changed' | 'unreliable' | 'reliable';

/**
 * Follows every change to one entry collection (issue #15 item 3), so per-node caches of
 * query results drop what another node's write made stale, and (issue #19) the changes
 * other nodes made reach this node's change feed (entry-watch.ts reads the events). `changed` on each event;
 * `unreliable` while the stream is down (a cache must stop serving from memory), then
 * `reliable` once it runs again (preceded by `changed`: events may have been missed).
 * Errors re-open it from the resume token with backoff; without change streams
 * (standalone server) it says so in the log once and stays `unreliable`, trying again
 * every `retryMaxMs`.
 */
export class CollectionWatcher {
  private stream: ChangeStream | undefined;
  private token: ResumeToken | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private reliable = false;
  private saidUnsupported = false;
  private stopped = false;

  constructor(
    private readonly collection: () => Collection<Document>,
    private readonly emit: (event: StoreEvent) => void,
    private readonly logger: Logger,
    private readonly retry: { initialMs: number; maxMs: number },
    /** Every change event itself (the changes other nodes made reach the change feed: entry-watch.ts). */
    private readonly onChange: (change: ChangeStreamDocument<Document>) => void = () => undefined,
  ) {}

  start(): void {
    if (this.stopped || this.stream) return;
    let stream: ChangeStream;
    try {
      // The document after each change (and before it, where the collection keeps pre-images,
      // MongoDB 6+) is what the change feed shows of another node's write.
      const options: ChangeStreamOptions = { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' };
      if (this.token) options.resumeAfter = this.token;
      stream = this.collection().watch([], options);
    } catch (error) {
      this.ended(undefined, error as Error);
      return;
    }
    this.stream = stream;
    const opened = (): void => {
      if (this.reliable || this.stream !== stream) return;
      this.failures = 0;
      this.reliable = true;
      this.emit('changed');
      this.emit('reliable');
    };
    stream.on('resumeTokenChanged', opened);
    stream.on('change', (change: ChangeStreamDocument<Document>) => {
      opened();
      this.token = change._id as ResumeToken;
      this.emit('changed');
      try {
        this.onChange(change);
      } catch (error) {
        this.logger.error({ err: error }, 'a listener of collection changes failed');
      }
    });
    stream.on('error', (error: Error) => this.ended(stream, error));
    stream.on('close', () => this.ended(stream, undefined));
    stream.on('end', () => this.ended(stream, undefined));
  }

  private ended(stream: ChangeStream | undefined, error: Error | undefined): void {
    if (this.stopped || (stream && this.stream !== stream)) return;
    this.stream = undefined;
    if (stream) void stream.close().catch(() => undefined);
    if (this.reliable) {
      this.reliable = false;
      this.emit('unreliable');
    }
    if (changeStreamsUnsupported(error)) {
      this.token = undefined;
      if (!this.saidUnsupported) {
        this.saidUnsupported = true;
        this.logger.warn({ err: { message: error!.message, code: codeOf(error) } }, 'query cache disabled for this database stream: change streams are unavailable (a standalone server?), so other nodes\' writes could not be seen');
      }
      this.schedule(this.retry.maxMs);
      return;
    }
    // A lost history or an invalidate (drop): the token is useless; start afresh.
    if (cannotResume(error)) this.token = undefined;
    this.failures += 1;
    this.schedule(backoffDelay(this.failures, this.retry.initialMs, this.retry.maxMs));
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, delayMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const stream = this.stream;
    this.stream = undefined;
    await stream?.close().catch(() => undefined);
  }
}
