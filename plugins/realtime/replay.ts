import { setTimeout as sleep } from 'node:timers/promises';
import { isClusterCursor } from './cluster-cursor.js';
import { deliverable, type Change, type ChangeFeed, type ChangeFilter } from './feed.js';

/** Where a replay writes: a Server-Sent Events stream, a WebSocket. */
export interface ReplayTarget {
  write(change: Change): void;
  closed(): boolean;
  /** Bytes written and not yet taken by the client. */
  buffered(): number;
}

export interface ReplayBudget {
  /** Bytes of history one request may replay; past them it stops with a cursor to resume from. */
  bytes: number;
  /**
   * The replay waits while more than this many bytes are still waiting for the client, and
   * reads about as many at a time: what it writes between two looks never passes twice this.
   */
  pauseAbove: number;
}

export type FollowResult =
  /** Caught up and subscribed: every new change goes to the target until `stop` is called. */
  | { live: true; stop: () => void }
  /** The budget was spent: resume from `cursor` (the last change looked at). */
  | { live: false; cursor: string }
  /** The client went away. */
  | { live: false; cursor: undefined };

/**
 * Where a client resumes from `since` (`caughtUp`: after a replay from the database read its
 * history to the end: cluster-replay.ts) (undefined: `start`, the feed's head or its oldest
 * change) and the filter it then gets. A `database` stream's cluster cursor ahead of what
 * this node has read (the client comes from a node whose follower is further on) skips
 * those changes when they arrive here: they were sent already.
 */
export function resumeAt(feed: ChangeFeed, stream: string, since: string | undefined, filter: ChangeFilter, start: 'head' | 'oldest', caughtUp = false): { after: number; filter: ChangeFilter } {
  if (since === undefined) return { after: start === 'head' ? feed.head : feed.position(stream, undefined), filter };
  if (!isClusterCursor(since)) return { after: feed.position(stream, since), filter };
  const { after, skipThrough } = feed.clusterPosition(stream, since, caughtUp);
  if (skipThrough === undefined) return { after, filter };
  const seen = (change: Change): boolean => isClusterCursor(change.cursor) && change.cursor <= skipThrough;
  return {
    after,
    filter: {
      // Its own key: subscribers that share a filter must share what it skips.
      key: `${filter.key}\u0000through:${skipThrough}`,
      accepts: (change) => !seen(change) && filter.accepts(change),
      view: (change) => (seen(change) ? undefined : deliverable(filter, change)),
    },
  };
}

/** Changes read from disk at a time. */
const BATCH = 64;
/** How often a paused replay looks whether its client took what waits. */
const PAUSE_MS = 10;

/**
 * Replay a stream's changes after `after` to a target as they are read (a batch at a time,
 * never one string or array of the whole replay), pausing while the client lags, then
 * subscribe it to the live feed in the very turn that found nothing more to replay, so no
 * change falls between the two and none comes twice. A history that moves past the replay
 * (retention dropped what was still to send) throws the feed's 410.
 */
export async function follow(feed: ChangeFeed, stream: string, after: number, filter: ChangeFilter, target: ReplayTarget, budget: ReplayBudget): Promise<FollowResult> {
  let spent = 0;
  let cursor: string | undefined;
  for (;;) {
    if (target.closed()) return { live: false, cursor: undefined };
    const places = feed.after(stream, after, BATCH, Math.min(budget.pauseAbove, budget.bytes - spent));
    if (places.length === 0) return { live: true, stop: feed.subscribe(stream, filter, (change) => target.write(change)) };
    const changes = await feed.read(places);
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i];
      if (target.closed()) return { live: false, cursor: undefined };
      spent += places[i]!.ref.length;
      // A line that does not parse (logged by the feed) is passed over, as a boot passes it over.
      after = places[i]!.seq;
      if (change !== undefined) {
        const seen = deliverable(filter, change);
        if (seen !== undefined) target.write(seen);
        cursor = change.cursor;
      }
      if (spent >= budget.bytes) return { live: false, cursor };
    }
    while (target.buffered() > budget.pauseAbove && !target.closed()) await sleep(PAUSE_MS);
  }
}

/**
 * One page of the changes after `after`: at most `max` that pass the filter, looking at no
 * more than `budgetBytes` of history. `last` is the cursor of the last change looked at.
 */
export async function page(feed: ChangeFeed, stream: string, after: number, filter: ChangeFilter, max: number, budgetBytes: number): Promise<{ changes: Change[]; last: string | undefined; more: boolean }> {
  const out: Change[] = [];
  let spent = 0;
  let last: string | undefined;
  for (;;) {
    const places = feed.after(stream, after, BATCH, budgetBytes - spent);
    if (places.length === 0) return { changes: out, last, more: false };
    const changes = await feed.read(places);
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i];
      if (out.length === max || spent >= budgetBytes) return { changes: out, last, more: true };
      spent += places[i]!.ref.length;
      after = places[i]!.seq;
      if (change === undefined) continue;
      const seen = deliverable(filter, change);
      if (seen !== undefined) out.push(seen);
      last = change.cursor;
    }
  }
}
