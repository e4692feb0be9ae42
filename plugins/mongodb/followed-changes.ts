import type { Db } from 'mongodb';
import { serviceRef } from '../../kernel/index.js';
import type { Entry } from '../sources/index.js';
import type { ChangePosition } from './change-follower.js';
import type { ChangeReplay } from './change-replay.js';
import type { FollowCoverage } from './collection-watcher.js';

/** One change of a `database` stream's collection as this node's follower read it. */
export interface FollowedChange {
  stream: string;
  collection: string;
  operationType: string;
  /** The entry key (`_id`), when the change is about one document. */
  key: unknown;
  /**
   * `own`: this node's write (the entries layer announced it already); `remote`: another
   * node's or tool's (announced as an external change with origin "remote"); `ignored`: not an
   * entry change (a drop, a non-entry `_id`), or nothing on this node listens to remote changes.
   */
  origin: 'own' | 'remote' | 'ignored';
  /** The change's resume token and cluster time: the same on every node that reads it. */
  position: ChangePosition;
  /**
   * The entry after the change (inserts, replaces; updates as the server looked it up when it
   * sent the event, so possibly a later version, and not the same moment on every node), or
   * undefined (a delete, or an update whose document is gone: its delete follows).
   */
  entry?: Entry;
  /** The entry before (a pre-image, when the collection keeps them), else undefined. */
  previous?: Entry;
  /** This node's unbroken run of following the collection the change belongs to. */
  coverage: FollowCoverage;
  /**
   * The change's place in that run (1: its first), set when it is published: a listener that
   * sees a run first at a later change knows it missed some (it started listening late).
   */
  inRun?: number;
  /** The database of the collection (a shared webhook outbox lives there: plugins/realtime/shared-outbox.ts). */
  db: Db | undefined;
}

/**
 * Every change the followers of `database` streams read, own writes included, with its
 * position in the replica set's history (issue #29 item 1, for item 6): a realtime plugin can
 * derive a cluster-wide cursor from `position` and resume a client on any node. Listeners run
 * synchronously, in the order of the collection's change stream, right after a remote change
 * was handed to the entries layer.
 */
export class FollowedChanges {
  private readonly listeners = new Set<(change: FollowedChange) => void>();
  private readonly databases = new Map<string, () => Db | undefined>();
  private readonly coverages = new Map<string, () => FollowCoverage>();
  private readonly replays = new Map<string, (from: { high: number; low: number }) => Promise<ChangeReplay>>();

  /**
   * A stream's collection is followed now: `db` is its database (where a shared outbox lives),
   * `coverage` this node's unbroken run of following it, `replay` reads its history back.
   * Returns what the source calls when it closes: the stream is forgotten, unless a newer
   * source of it (a redefinition opens the new one first) registered since.
   */
  following(stream: string, db: () => Db | undefined, coverage: () => FollowCoverage, replay: (from: { high: number; low: number }) => Promise<ChangeReplay>): () => void {
    this.databases.set(stream, db);
    this.coverages.set(stream, coverage);
    this.replays.set(stream, replay);
    return () => {
      if (this.coverages.get(stream) === coverage) this.forget(stream);
    };
  }

  /** The stream's changes from a cluster time on (inclusive), read back from the deployment (change-replay.ts); undefined: not a followed stream. */
  replay(stream: string, from: { high: number; low: number }): Promise<ChangeReplay> | undefined {
    return this.replays.get(stream)?.(from);
  }

  /** Whether this node's follower of the stream's collection has opened its change stream (every later change reaches the listeners). */
  isFollowing(stream: string): boolean {
    return (this.coverages.get(stream)?.().epoch ?? 0) > 0;
  }

  /** The databases of every followed stream (a node takes over shared deliveries in each). */
  followedDatabases(): Db[] {
    const out = new Set<Db>();
    for (const db of this.databases.values()) {
      const found = db();
      if (found !== undefined) out.add(found);
    }
    return [...out];
  }

  listen(listener: (change: FollowedChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private readonly runCounts = new WeakMap<FollowCoverage, number>();

  publish(change: FollowedChange): void {
    const count = (this.runCounts.get(change.coverage) ?? 0) + 1;
    this.runCounts.set(change.coverage, count);
    change.inRun = count;
    for (const listener of [...this.listeners]) listener(change);
  }

  forget(stream: string): void {
    this.databases.delete(stream);
    this.coverages.delete(stream);
    this.replays.delete(stream);
  }
}

/** `context.find(MONGODB_CHANGES)`: the changes every `database` stream's follower reads. */
export const MONGODB_CHANGES = serviceRef<FollowedChanges>('mongodb-changes');
