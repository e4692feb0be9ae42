import type { ChangeStreamDocument, Collection, Db, Document, Timestamp } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import { ChangeFollower, type ChangePosition } from './change-follower.js';
import { codeOf } from './errors.js';

/**
 * One unbroken run of following: `epoch` grows at every fresh start (the follower had no resume
 * point), `from` is the cluster time it started at (every change at or after it is read).
 */
export interface FollowCoverage {
  epoch: number;
  from: Timestamp | undefined;
}

/** What a cache over a collection needs to hear (Source.watchStore). */
export type StoreEvent = 'changed' | 'unreliable' | 'reliable';

/**
 * Follows every change to one entry collection (issue #15 item 3) through the one change
 * follower (change-follower.ts), so per-node caches of query results drop what another node's
 * write made stale, and (issue #19) the changes other nodes made reach this node's change feed
 * (entry-watch.ts reads the events). `changed` on each event; `unreliable` while the stream is
 * down (a cache must stop serving from memory), then `reliable` once it runs again (preceded
 * by `changed`: a cache dropped while down may hold nothing stale, but say it anyway). Without
 * change streams (standalone server) it says so in the log once and stays `unreliable`,
 * trying again every `retryMaxMs`.
 */
export class CollectionWatcher {
  private readonly follower: ChangeFollower<Document>;
  private reliable = false;
  private saidUnsupported = false;
  private coverageNow: FollowCoverage = { epoch: 0, from: undefined };

  constructor(
    collection: () => Collection<Document>,
    private readonly emit: (event: StoreEvent) => void,
    private readonly logger: Logger,
    retry: { initialMs: number; maxMs: number },
    /** Every change event itself, with its position (the changes other nodes made reach the change feed: entry-watch.ts). */
    private readonly onChange: (change: ChangeStreamDocument<Document>, position: ChangePosition) => void = () => undefined,
    db: () => Db | undefined = () => undefined,
  ) {
    this.follower = new ChangeFollower<Document>(
      collection,
      db,
      {
        opened: (resumed) => {
          // A fresh start (boot, or after the resume point was dropped): the changes this node
          // has followed without a hole begin here (realtime across nodes, issue #29 item 6).
          if (!resumed) this.coverageNow = { epoch: this.coverageNow.epoch + 1, from: this.follower.resumePoint.startAtOperationTime };
          if (this.reliable) return;
          this.reliable = true;
          this.emit('changed');
          this.emit('reliable');
        },
        change: (change, position) => {
          this.emit('changed');
          this.onChange(change, position);
        },
        interrupted: () => this.unreliable(),
        lost: (reason, error) => {
          this.unreliable();
          if (reason === 'unsupported' && !this.saidUnsupported) {
            this.saidUnsupported = true;
            this.logger.warn(
              { err: { message: error?.message, code: codeOf(error) } },
              "query cache disabled for this database stream: change streams are unavailable (a standalone server?), so other nodes' writes could not be seen",
            );
          }
        },
      },
      logger,
      { retry, watch: { fullDocument: 'updateLookup', fullDocumentBeforeChange: 'whenAvailable' } },
    );
  }

  /** Since when this node has read every change of the collection, without a hole (`from`: unknown when the start time could not be read). */
  get coverage(): FollowCoverage {
    return this.coverageNow;
  }

  /** The newest resume point kept (tests, and what a restart resumes from). */
  get resumePoint(): ChangeFollower['resumePoint'] {
    return this.follower.resumePoint;
  }

  private unreliable(): void {
    if (!this.reliable) return;
    this.reliable = false;
    this.emit('unreliable');
  }

  start(): void {
    this.follower.start();
  }

  async stop(): Promise<void> {
    await this.follower.stop();
  }
}
