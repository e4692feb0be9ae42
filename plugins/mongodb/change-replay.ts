import { Timestamp, type ChangeStream, type ChangeStreamDocument, type Collection, type Document, type ResumeToken } from 'mongodb';
import { AppError } from '../../kernel/index.js';
import { fromDocument } from './documents.js';
import { cannotResume, codeOf } from './errors.js';
import type { FollowedChange } from './followed-changes.js';

/** A change read back from the deployment's history: what the realtime feed needs of it. */
export type ReplayedChange = Pick<FollowedChange, 'stream' | 'operationType' | 'key' | 'position' | 'entry' | 'previous'>;

/** A replay of a collection's changes from a cluster time (realtime across nodes, issue #29 item 6). */
export interface ChangeReplay {
  /** The next change, or undefined once the history is read to its end (an empty batch: caught up). */
  next(): Promise<ReplayedChange | undefined>;
  close(): Promise<void>;
}

/** How long an empty getMore of a replay waits for a change: it only reads what is there. */
const REPLAY_AWAIT_MS = 50;

/**
 * Open a change stream at `startAt` (inclusive) to read back what a node's own history does
 * not hold (it booted, or restarted its follower, after the client's cursor). The first batch
 * is read now, so a point the oplog no longer holds answers 410 before anything is sent, and
 * a server that cannot answer 503.
 */
export async function openReplay(collection: Collection<Document>, stream: string, keyName: string, startAt: { high: number; low: number }): Promise<ChangeReplay> {
  const changes: ChangeStream<Document, ChangeStreamDocument<Document>> = collection.watch([], {
    startAtOperationTime: new Timestamp({ t: startAt.high >>> 0, i: startAt.low >>> 0 }),
    fullDocument: 'updateLookup',
    fullDocumentBeforeChange: 'whenAvailable',
    maxAwaitTimeMS: REPLAY_AWAIT_MS,
  });
  changes.on('error', () => undefined); // read as an iterator: errors are thrown by tryNext
  const read = async (): Promise<ReplayedChange | undefined> => {
    let change: ChangeStreamDocument<Document> | null;
    try {
      change = await changes.tryNext();
    } catch (error) {
      if (cannotResume(error)) throw new AppError(410, 'Changes after the cursor are no longer in the database\'s history (the oplog moved on): read the list again.');
      throw new AppError(503, `The change history cannot be read now (${codeOf(error) ?? (error as Error).message}): try again.`);
    }
    if (change === null || change.operationType === 'invalidate') return undefined;
    const key = 'documentKey' in change ? (change.documentKey as { _id?: unknown } | undefined)?._id : undefined;
    return {
      stream,
      operationType: change.operationType,
      key,
      position: { token: change._id as ResumeToken, clusterTime: (change as { clusterTime?: Timestamp }).clusterTime },
      entry: 'fullDocument' in change && change.fullDocument ? fromDocument(change.fullDocument, keyName) : undefined,
      previous: 'fullDocumentBeforeChange' in change && change.fullDocumentBeforeChange ? fromDocument(change.fullDocumentBeforeChange, keyName) : undefined,
    };
  };
  let first: Promise<ReplayedChange | undefined> | undefined = read();
  try {
    await first;
  } catch (error) {
    await changes.close().catch(() => undefined);
    throw error;
  }
  return {
    next: () => {
      const out = first ?? read();
      first = undefined;
      return out;
    },
    close: () => changes.close().catch(() => undefined),
  };
}
