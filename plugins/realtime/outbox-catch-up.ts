import type { Db } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import { ClusterReplay, type ClusterReplayDeps } from './cluster-replay.js';
import type { SharedOutbox } from './shared-outbox.js';

/** Changes read from the database at a time during a catch-up. */
const BATCH = 64;

/**
 * Webhooks of the changes made while no node followed a `database` stream (every node down,
 * or none running yet: a follower that starts afresh begins at "now"). When this node starts a
 * run of following, the changes after the stream's mark (the newest one whose deliveries some
 * node queued: shared-outbox.ts) and before the run's start are read back from the database
 * and their deliveries queued, as every node queues those of the changes it reads; queuing is
 * idempotent, so nodes that catch up together add each delivery once. Bounded by the oplog:
 * past it, logged, those deliveries are lost.
 */
export async function catchUpWebhooks(deps: ClusterReplayDeps, outbox: SharedOutbox, stream: string, db: Db | undefined, logger: Logger): Promise<void> {
  if (db === undefined || !outbox.wanted) return;
  // At once, before the run's first change is queued: it must not move the mark this reads.
  const release = outbox.holdMark(stream);
  let replay: ClusterReplay | undefined;
  try {
    const mark = await outbox.markOf(db, stream);
    release();
    if (mark === undefined) return; // no node ever queued one: nothing to catch up with
    // Undefined when this node's history holds everything after the mark.
    replay = await ClusterReplay.open(deps, stream, mark);
    if (replay === undefined) return;
    let queued = 0;
    while (!replay.done) {
      for (const change of await replay.read(BATCH)) {
        await outbox.enqueue(change, db);
        queued++;
      }
    }
    if (queued > 0) logger.info({ stream, queued }, 'webhook deliveries queued for changes made while no node followed the stream');
  } catch (error) {
    logger.error({ err: { message: (error as Error).message }, stream }, 'webhook deliveries of changes made while no node followed the stream could not be queued');
  } finally {
    release();
    await replay?.close();
  }
}
