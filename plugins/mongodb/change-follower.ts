import type { ChangeStream, ChangeStreamDocument, ChangeStreamOptions, Collection, Db, Document, ResumeToken, Timestamp } from 'mongodb';
import { backoffDelay, type Logger } from '../../kernel/index.js';
import { cannotResume, changeStreamsUnsupported, codeOf } from './errors.js';

/**
 * Where one change sits in the deployment's history: its resume token (opaque, resumable on
 * any node of the replica set) and its cluster time (comparable across nodes). Exposed with
 * every followed change so a cluster-wide cursor can be derived from it (issue #29 item 6).
 */
export interface ChangePosition {
  token: ResumeToken;
  clusterTime: Timestamp | undefined;
}

/** Why the follower dropped its resume point: what it would have told must be found afresh. */
export type LostReason = 'invalidate' | 'non-resumable' | 'unsupported';

export interface FollowerHandlers<T extends Document> {
  /** One change, in order; `position` is that change's own token and cluster time. */
  change(change: ChangeStreamDocument<T>, position: ChangePosition): void;
  /** The stream runs (its first batch came back). `resumed`: from a kept resume point (nothing missed). */
  opened(resumed: boolean): void;
  /** The stream stopped; it re-opens from the kept resume point after `retryInMs`. */
  interrupted(error: Error | undefined, retryInMs: number): void;
  /** The resume point was dropped (invalidate, a non-resumable server error, no change streams here). */
  lost(reason: LostReason, error: Error | undefined): void;
}

export interface FollowerOptions {
  /** Backoff of re-opening (kernel/backoff.ts), and the retry interval without change streams. */
  retry: { initialMs: number; maxMs: number };
  /** `fullDocument`, `fullDocumentBeforeChange`... (the resume options are the follower's own). */
  watch?: ChangeStreamOptions;
}

/**
 * The one change follower (issue #29 item 1) used by the collection watcher (caches, remote
 * changes) and the definition store. It reads the change stream as an iterator (`tryNext`),
 * so the driver's own resume after a resumable error (which emits `close` on an emitter
 * stream, and which the old watchers took for "cannot resume") stays inside the driver, and
 * only an error the driver gives up on reaches this loop. It keeps the newest resume point the
 * driver reports after every batch (a change's token or a post-batch token); a collection
 * with no change yet is opened at the cluster time of a `hello` read just before, so even its
 * first gap is covered. A stream that ended, or an error the server does not call
 * non-resumable, re-opens from that point with backoff; only `invalidate`, a
 * non-resumable server error (286, 280, 260, the NonResumableChangeStreamError label) or a
 * deployment without change streams drops it.
 */
export class ChangeFollower<T extends Document = Document> {
  private token: ResumeToken | undefined;
  private startAt: Timestamp | undefined;
  private stream: ChangeStream<T, ChangeStreamDocument<T>> | undefined;
  private running = false;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly collection: () => Collection<T>,
    private readonly db: () => Db | undefined,
    private readonly handlers: FollowerHandlers<T>,
    private readonly logger: Logger,
    private readonly options: FollowerOptions,
  ) {}

  /** The newest resume point (a token, else the opening cluster time): what a restart resumes from. */
  get resumePoint(): { token: ResumeToken | undefined; startAtOperationTime: Timestamp | undefined } {
    return { token: this.token, startAtOperationTime: this.startAt };
  }

  start(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    void this.loop().finally(() => {
      this.running = false;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    const stream = this.stream;
    this.stream = undefined;
    await stream?.close().catch(() => undefined);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const delay = await this.follow();
      if (this.stopped) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, delay);
        this.timer.unref();
      });
      this.timer = undefined;
      this.wake = undefined;
    }
  }

  /** Open the stream once and read it until it stops; resolves with the wait before the next open. */
  private async follow(): Promise<number> {
    const resumed = this.token !== undefined || this.startAt !== undefined;
    let stream: ChangeStream<T, ChangeStreamDocument<T>> | undefined;
    try {
      if (!resumed) this.startAt = await this.clusterTime();
      const options: ChangeStreamOptions = { ...this.options.watch };
      if (this.token !== undefined) options.resumeAfter = this.token;
      else if (this.startAt !== undefined) options.startAtOperationTime = this.startAt;
      stream = this.collection().watch<T, ChangeStreamDocument<T>>([], options);
      this.stream = stream;
      let open = false;
      const opened = (): void => {
        if (open || this.stopped || this.stream !== stream) return;
        open = true;
        this.failures = 0;
        this.handlers.opened(resumed);
      };
      // The driver reports the opening aggregate's post-batch token at once; the first
      // `tryNext` may wait a whole idle getMore (maxAwaitTimeMS) before it returns.
      stream.on('resumeTokenChanged', opened);
      stream.on('error', () => undefined); // iterator mode throws instead; never an unhandled 'error'
      while (!this.stopped) {
        const change = await stream.tryNext();
        if (this.stopped) break;
        opened();
        if (change) {
          if (change.operationType === 'invalidate') {
            this.drop();
            this.handlers.lost('invalidate', undefined);
            return 0;
          }
          this.token = change._id as ResumeToken;
          this.startAt = undefined;
          this.deliver(change);
        }
        // After every batch the driver holds the newest point (a post-batch token when the
        // batch ended empty): kept, so a restart never goes back to "now".
        const newest = stream.resumeToken;
        if (newest !== undefined && newest !== null) {
          this.token = newest;
          this.startAt = undefined;
        }
        if (!change && stream.closed) break; // ended (the cursor is gone): re-open from the point
      }
      if (this.stopped) return 0;
      return this.interrupted(undefined);
    } catch (error) {
      if (this.stopped) return 0;
      return this.failed(error as Error);
    } finally {
      if (this.stream === stream) this.stream = undefined;
      void stream?.close().catch(() => undefined);
    }
  }

  private deliver(change: ChangeStreamDocument<T>): void {
    const position: ChangePosition = { token: change._id as ResumeToken, clusterTime: (change as { clusterTime?: Timestamp }).clusterTime };
    try {
      this.handlers.change(change, position);
    } catch (error) {
      this.logger.error({ err: error }, 'a listener of followed changes failed');
    }
  }

  /**
   * The deployment's cluster time now (the `operationTime` of a `hello`): a stream opened at
   * it misses nothing written after this read, even before its first change or batch.
   */
  private async clusterTime(): Promise<Timestamp | undefined> {
    const db = this.db();
    if (!db) return undefined;
    const reply = await db.command({ hello: 1 });
    const time = (reply as { operationTime?: unknown }).operationTime;
    if (!time || typeof time !== 'object' || (time as { _bsontype?: string })._bsontype !== 'Timestamp') return undefined;
    // `startAtOperationTime` includes operations at that time: those happened before this
    // read (the follower starts after them, or a reload covers them), so start one tick later.
    const stamp = time as Timestamp;
    const next = stamp.add(1);
    return new (stamp.constructor as typeof Timestamp)({ t: next.high >>> 0, i: next.low >>> 0 });
  }

  private drop(): void {
    this.token = undefined;
    this.startAt = undefined;
  }

  private interrupted(error: Error | undefined): number {
    this.failures += 1;
    // The first re-open after a clean end is immediate; repeated ones back off.
    const delay = this.failures === 1 && !error ? 0 : backoffDelay(this.failures, this.options.retry.initialMs, this.options.retry.maxMs);
    this.handlers.interrupted(error, delay);
    return delay;
  }

  private failed(error: Error): number {
    if (changeStreamsUnsupported(error)) {
      this.drop();
      this.handlers.lost('unsupported', error);
      return this.options.retry.maxMs;
    }
    if (cannotResume(error)) {
      this.logger.warn({ err: { message: error.message, code: codeOf(error) } }, 'change stream cannot resume from its token (the server says so): following afresh after a full reload');
      this.drop();
      this.handlers.lost('non-resumable', error);
      this.failures += 1;
      return backoffDelay(this.failures, this.options.retry.initialMs, this.options.retry.maxMs);
    }
    return this.interrupted(error);
  }
}
