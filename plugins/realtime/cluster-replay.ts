import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, isAppError } from '../../kernel/index.js';
import type { EntriesService } from '../entries/index.js';
import type { ChangeReplay, FollowedChanges } from '../mongodb/index.js';
import type { StreamRegistry } from '../streams/index.js';
import { entryChangeOf, Ordinals } from './cluster-changes.js';
import { isClusterCursor, timeOfCursor } from './cluster-cursor.js';
import { deliverable, type Change, type ChangeFeed, type ChangeFilter } from './feed.js';
import { follow, page, resumeAt, type FollowResult, type ReplayBudget, type ReplayTarget } from './replay.js';

export interface ClusterReplayDeps {
  feed: ChangeFeed;
  /** The mongodb plugin's followed changes (undefined without it: no replay from the database). */
  changes(): FollowedChanges | undefined;
  registry(): StreamRegistry;
  entries(): EntriesService;
  keepBefore: boolean;
}

/** Changes read from the database at a time, between two looks at the client's buffer. */
const BATCH = 64;
const PAUSE_MS = 10;

/**
 * A client's cluster cursor that this node's own history does not reach back to (it booted,
 * or restarted its follower, after it): the changes after it are read back from the
 * database's history (a change stream opened at the cursor's cluster time, change-replay.ts)
 * until that history is read to its end, or reaches what the local history holds; then the
 * client continues on the local feed, changes up to the last one sent skipped. The oplog
 * bounds how far back this reaches: past it, 410.
 */
export class ClusterReplay {
  /** The cursor of the last change looked at. */
  last: string;
  /** The database's history was read to its end. */
  caughtUp = false;
  private readonly ordinals = new Ordinals();

  private constructor(
    private readonly deps: ClusterReplayDeps,
    private readonly stream: string,
    private readonly replay: ChangeReplay,
    since: string,
  ) {
    this.last = since;
  }

  /**
   * The replay a cursor needs on this node, opened (410 when the database's history no longer
   * holds it, 503 when it cannot be read now), or undefined when the local history serves it.
   */
  static async open(deps: ClusterReplayDeps, stream: string, since: string | undefined): Promise<ClusterReplay | undefined> {
    if (since === undefined || !isClusterCursor(since) || !deps.feed.beforeCoverage(stream, since)) return undefined;
    const changes = deps.changes();
    // A database stream this node does not follow (yet): its history is the only answer (410 from the feed).
    if (changes === undefined || !changes.isFollowing(stream)) return undefined;
    const opened = changes.replay(stream, timeOfCursor(since));
    if (opened === undefined) return undefined;
    try {
      return new ClusterReplay(deps, stream, await opened, since);
    } catch (error) {
      // Past the oplog: the feed's 410, with the cursor this node can follow from.
      if (isAppError(error) && error.status === 410) throw deps.feed.goneFromDatabase(stream, since);
      throw error;
    }
  }

  /** Up to `max` changes after the cursor (fewer once caught up or handed to the local history). */
  async read(max: number): Promise<Change[]> {
    const out: Change[] = [];
    const definition = this.deps.registry().get(this.stream);
    if (definition === undefined) throw new AppError(404, `The stream [${this.stream}] does not exist.`);
    while (out.length < max && !this.done) {
      const replayed = await this.replay.next();
      if (replayed === undefined) {
        this.caughtUp = true;
        break;
      }
      const time = replayed.position.clusterTime;
      if (time === undefined) continue;
      const cursor = this.ordinals.cursorOf(this.stream, time);
      if (cursor <= this.last) continue; // at the cursor's cluster time, up to it: seen
      this.last = cursor;
      const entry = entryChangeOf(replayed, definition, this.deps.entries(), this.deps.keepBefore);
      if (entry === undefined) continue;
      const change: Change = { cursor, seq: 0, stream: this.stream, event: entry.event, id: entry.id, data: entry.data, match: entry.match, at: Date.now() };
      if (entry.before !== undefined) change.before = entry.before;
      out.push(change);
    }
    return out;
  }

  /** Caught up, or as far as the local history holds complete: the rest comes from it. */
  get done(): boolean {
    return this.caughtUp || !this.deps.feed.beforeCoverage(this.stream, this.last);
  }

  /** Where the client continues on the local feed (changes up to `last` skipped). */
  local(filter: ChangeFilter): { after: number; filter: ChangeFilter } {
    return resumeAt(this.deps.feed, this.stream, this.last, filter, 'head', this.caughtUp);
  }

  close(): Promise<void> {
    return this.replay.close();
  }
}

/** `follow` (replay.ts) from a cluster cursor this node's history does not reach: the database's history first. */
export async function followCluster(replay: ClusterReplay, feed: ChangeFeed, stream: string, filter: ChangeFilter, target: ReplayTarget, budget: ReplayBudget): Promise<FollowResult> {
  let spent = 0;
  try {
    while (!replay.done) {
      if (target.closed()) return { live: false, cursor: undefined };
      for (const change of await replay.read(BATCH)) {
        const seen = deliverable(filter, change);
        if (seen !== undefined) target.write(seen);
        spent += change.data.length + 128;
      }
      if (spent >= budget.bytes) return { live: false, cursor: replay.last };
      while (target.buffered() > budget.pauseAbove && !target.closed()) await sleep(PAUSE_MS);
    }
  } finally {
    await replay.close();
  }
  if (target.closed()) return { live: false, cursor: undefined };
  const local = replay.local(filter);
  return follow(feed, stream, local.after, local.filter, target, { ...budget, bytes: Math.max(budget.pauseAbove, budget.bytes - spent) });
}

/** `page` (replay.ts) from such a cursor: the database's history, then (once caught up) the local one. */
export async function pageCluster(replay: ClusterReplay, feed: ChangeFeed, stream: string, filter: ChangeFilter, max: number, budgetBytes: number): Promise<{ changes: Change[]; last: string | undefined; more: boolean }> {
  const out: Change[] = [];
  let spent = 0;
  try {
    while (out.length < max && !replay.done) {
      for (const change of await replay.read(Math.min(BATCH, max - out.length))) {
        const seen = deliverable(filter, change);
        if (seen !== undefined) out.push(seen);
        spent += change.data.length + 128;
      }
      // Looked at as much history as a page may (a narrow filter over a long history): the next page goes on.
      if (spent >= budgetBytes && !replay.done) return { changes: out, last: replay.last, more: true };
    }
  } finally {
    await replay.close();
  }
  if (out.length >= max) return { changes: out, last: replay.last, more: true };
  const local = replay.local(filter);
  const rest = await page(feed, stream, local.after, local.filter, max - out.length, budgetBytes);
  return { changes: [...out, ...rest.changes], last: rest.last ?? replay.last, more: rest.more };
}
