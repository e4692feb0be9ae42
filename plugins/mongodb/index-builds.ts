import type { Logger } from '../../kernel/index.js';

/** One stream's index build as `/readyz` details show it. */
export interface IndexBuildReport {
  stream: string;
  collection: string;
  state: 'building' | 'failed';
  /** Indexes built so far, of all this stream needs (progress). */
  done: number;
  total: number;
  since: string;
  reason?: string;
}

/** A unique index that could not be built because duplicates are stored (`/readyz` details, issue #29). */
export interface FailedUniqueIndex {
  stream: string;
  collection: string;
  field: string;
  index: string;
  /** One value stored more than once (the server's `keyValue`), so an operator can find the duplicates. */
  duplicate: unknown;
  reason: string;
}

/**
 * Index builds run in the background (issue #15 item 5): a stream serves while its
 * indexes build, and no node's readiness waits for one (an index build on a large
 * collection can take minutes, and every node of a fleet opens the same streams). This
 * is the per-process register of builds in progress or failed, for `/readyz` details.
 * Bounded: one record per stream, removed when its build succeeds.
 */
export class IndexBuilds {
  private readonly builds = new Map<string, IndexBuildReport>();
  private readonly failedUnique = new Map<string, FailedUniqueIndex>();

  constructor(private readonly logger: Logger) {}

  /** Run `build` in the background; `progress(done)` is called as each index completes. */
  start(stream: string, collection: string, total: number, build: (progress: (done: number) => void) => Promise<void>): Promise<void> {
    const report: IndexBuildReport = { stream, collection, state: 'building', done: 0, total, since: new Date().toISOString() };
    this.builds.set(stream, report);
    return build((done) => {
      report.done = done;
    }).then(
      () => {
        if (this.builds.get(stream) === report) this.builds.delete(stream);
      },
      (error: unknown) => {
        report.state = 'failed';
        report.reason = (error as Error).message;
        this.logger.error({ stream, collection, err: { message: report.reason } }, `index build of ${collection} failed; the stream serves without those indexes (retried when it reopens)`);
      },
    );
  }

  forget(stream: string): void {
    this.builds.delete(stream);
    for (const [key, failed] of this.failedUnique) if (failed.stream === stream) this.failedUnique.delete(key);
  }

  /** A unique index of `stream` failed on stored duplicates (kept until it builds or the stream closes). */
  uniqueFailed(failed: FailedUniqueIndex): void {
    this.failedUnique.set(`${failed.stream}\u0000${failed.index}`, failed);
  }

  uniqueBuilt(stream: string, index: string): void {
    this.failedUnique.delete(`${stream}\u0000${index}`);
  }

  /** Unique indexes that failed on duplicates, for `/readyz` details (empty when none). */
  failedUniqueIndexes(): FailedUniqueIndex[] {
    return [...this.failedUnique.values()].map((f) => ({ ...f }));
  }

  /** Builds in progress or failed, for `/readyz` details (empty when none). */
  report(): IndexBuildReport[] {
    return [...this.builds.values()].map((b) => ({ ...b }));
  }
}
