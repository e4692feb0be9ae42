import { serviceRef } from '../../kernel/index.js';
import type { ChangePosition } from './change-follower.js';

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
}

/**
 * Every change the followers of `database` streams read, own writes included, with its
 * position in the replica set's history (issue #29 item 1, for item 6): a realtime plugin can
 * derive a cluster-wide cursor from `position` and resume a client on any node. Listeners run
 * synchronously, in the order of the collection's change stream, right after a remote change
 * was handed to the entries layer. `latest(stream)` is the newest position read for a stream.
 */
export class FollowedChanges {
  private readonly listeners = new Set<(change: FollowedChange) => void>();
  private readonly newest = new Map<string, ChangePosition>();

  listen(listener: (change: FollowedChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  latest(stream: string): ChangePosition | undefined {
    return this.newest.get(stream);
  }

  publish(change: FollowedChange): void {
    this.newest.set(change.stream, change.position);
    for (const listener of [...this.listeners]) listener(change);
  }

  forget(stream: string): void {
    this.newest.delete(stream);
  }
}

/** `context.find(MONGODB_CHANGES)`: the changes every `database` stream's follower reads. */
export const MONGODB_CHANGES = serviceRef<FollowedChanges>('mongodb-changes');
