import type { Logger } from '../../kernel/index.js';
import type { EntriesService } from '../entries/index.js';
import type { HttpServer } from '../http/index.js';
import type { FollowedChange, ReplayedChange } from '../mongodb/index.js';
import type { StreamDefinition, StreamRegistry } from '../streams/index.js';
import { clusterCursor, type ClusterTime } from './cluster-cursor.js';
import type { ChangeEvent, ChangeFeed } from './feed.js';
import type { SharedOutbox } from './shared-outbox.js';
import { socketMessage, topicOf } from './subscription.js';

const EVENTS: Record<string, ChangeEvent | undefined> = { insert: 'created', update: 'updated', replace: 'updated', delete: 'deleted' };

export interface ClusterChangesDeps {
  feed: ChangeFeed;
  registry(): StreamRegistry;
  entries(): EntriesService;
  server: HttpServer;
  outbox: SharedOutbox;
  /** Access rules are on: updates keep the version before (a pre-image, when the collection keeps them). */
  keepBefore: boolean;
  logger: Logger;
  /** A new run of following began (its coverage is set): webhooks of what came before it (outbox-catch-up.ts). */
  newRun?(stream: string, db: FollowedChange['db']): void;
}

/**
 * The change feed of `database` streams, filled from the collection's change stream (issue
 * #29 item 6) instead of the entry hooks: every node reads the same changes in the same
 * order, this node's own writes included, so each change gets the same cluster cursor on
 * every node (its cluster time and ordinal: cluster-cursor.ts), and a client resumes on any
 * node. Its webhooks go to the shared outbox (shared-outbox.ts): once per change across the
 * cluster. An own write reaches this node's subscribers once its change event is read (a
 * round trip later than from the hook), in the order of the replica set's history.
 */
export class ClusterChanges {
  /** Per stream: the follower's run (a new one: the local history is complete from its start only). By identity: a re-created stream's follower counts from 1 again. */
  private readonly runs = new Map<string, FollowedChange['coverage']>();

  constructor(private readonly deps: ClusterChangesDeps) {}

  handle(followed: FollowedChange): void {
    const definition = this.deps.registry().get(followed.stream);
    const time = followed.position.clusterTime;
    // Not from a server that names cluster times: nothing to resume from.
    if (definition === undefined || time === undefined) return;
    const stream = followed.stream;
    // Every change counts for the ordinal (a replay counts them all the same), entries or not.
    const cursor = this.ordinals.cursorOf(stream, time);
    if (this.runs.get(stream) !== followed.coverage) {
      this.runs.set(stream, followed.coverage);
      // Everything at or after the follower's start time is read here; without it (or when this
      // listener came after the run's first change: it was attached late), from this change on.
      const from = followed.coverage.from;
      const whole = from !== undefined && (followed.inRun ?? 1) === 1;
      this.deps.feed.cover(stream, whole ? clusterCursor(before(from), 0xffff) : cursor);
      this.deps.newRun?.(stream, followed.db);
    }
    const entry = entryChangeOf(followed, definition, this.deps.entries(), this.deps.keepBefore);
    if (entry === undefined) return;
    const change = this.deps.feed.publish(stream, entry.event, entry.id, entry.data, entry.match, entry.before, cursor);
    this.deps.server.publish?.(topicOf(stream), socketMessage(change));
    this.deps.outbox.enqueue(change, followed.db).catch((error: unknown) => {
      this.deps.logger.error({ err: { message: (error as Error).message }, stream, cursor }, 'webhook deliveries of a database stream could not be queued (another node that read the change queues them)');
    });
  }

  private readonly ordinals = new Ordinals();
}

/**
 * Cluster cursors of one reader of changes (the follower, or a replay): the ordinal counts the
 * changes of a stream at the same cluster time, in the order read. Every reader starts at a
 * cluster time's first change (a follower at a time after a `hello`, a replay at a cursor's
 * time), so every node counts the same.
 */
export class Ordinals {
  private readonly last = new Map<string, { time: string; ordinal: number }>();

  cursorOf(stream: string, time: ClusterTime): string {
    const at = clusterCursor(time, 0).slice(0, 16);
    const previous = this.last.get(stream);
    const ordinal = previous !== undefined && previous.time === at ? previous.ordinal + 1 : 0;
    this.last.set(stream, { time: at, ordinal });
    return clusterCursor(time, ordinal);
  }
}

/** The entry key of a change of an entry (insert, update, replace, delete of a string or number `_id`), else undefined. */
function entryKeyOf(change: ReplayedChange): string | number | undefined {
  const key = change.key;
  if (EVENTS[change.operationType] === undefined || (typeof key !== 'string' && typeof key !== 'number')) return undefined;
  return key;
}

/** What a followed or replayed change is in the feed, or undefined when it is no entry change. */
export function entryChangeOf(
  change: ReplayedChange,
  definition: StreamDefinition,
  entries: EntriesService,
  keepBefore: boolean,
): { event: ChangeEvent; id: string | number; data: string; match: Record<string, unknown>; before?: Record<string, unknown> } | undefined {
  const id = entryKeyOf(change);
  if (id === undefined) return undefined;
  const event = EVENTS[change.operationType]!;
  // An update whose document was gone when the server looked it up: its delete follows.
  if (event !== 'deleted' && change.entry === undefined) return undefined;
  const data = event === 'deleted' ? 'null' : entries.toJson(definition, change.entry!);
  const match = event === 'deleted' ? (change.previous ?? { [definition.config.key_name]: id }) : change.entry!;
  return { event, id, data, match, before: keepBefore && event === 'updated' ? change.previous : undefined };
}

/** The cluster time one tick before `time` (a follower started at `time` read every change after it). */
function before(time: ClusterTime): ClusterTime {
  return time.low > 0 ? { high: time.high, low: time.low - 1 } : { high: time.high - 1, low: 0xffffffff };
}
