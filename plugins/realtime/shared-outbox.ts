import { createHash, randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import type { Change } from './feed.js';
import { nextAttempt, webhookBody, type Webhooks, type WebhookSettings } from './webhooks.js';

export interface SharedOutboxSettings {
  /** The collection (in each `database` stream's database) that holds the deliveries. */
  collection: string;
  /** How long a claim holds a delivery; past it (its node died) another node takes it over. */
  leaseMs: number;
  /** How often a node looks for deliveries it may take (retries due, claims expired). */
  pollMs: number;
  /** Delivered (or given up) deliveries are kept this long, so a node that reads the change late does not add it again. */
  keepDoneMs: number;
}

/** One delivery as the shared collection holds it. */
interface SharedDelivery {
  /** Derived from the change and the webhook (deliveryId): the same on every node. */
  _id: string;
  url: string;
  stream: string;
  from_stream: boolean;
  body: string;
  attempts: number;
  /** When the next attempt may run. */
  due: Date;
  /** The claim: the node holding it, until when. */
  owner: string | null;
  until: Date;
  created: Date;
  done: boolean;
  /** When it was delivered or given up (a TTL index removes it `keepDoneMs` later). */
  finished_at?: Date;
  dead_reason?: string;
}

/** The catch-up mark of a stream, beside its deliveries (`_id`: `mark:<stream>`; never claimed: it has no `done`). */
interface OutboxMark {
  _id: string;
  cursor: string;
}

/** Deliveries one node sends at a time (over every database). */
const MAX_IN_FLIGHT = 8;
/** How long a closing node waits for its posts in flight to be answered and recorded. */
const CLOSE_GRACE_MS = 1000;

/**
 * The id of a change's delivery to one webhook: a digest of the stream, the change's
 * cluster cursor and the webhook URL. Every node that reads the change derives the same id,
 * so the cluster keeps one delivery per change and webhook, and a receiver that dedupes by
 * `Streams-Delivery` gets each change once even when a delivery is sent again after a node died.
 */
export function deliveryId(stream: string, cursor: string, url: string): string {
  return createHash('sha256').update(`${stream}\n${cursor}\n${url}`).digest('hex').slice(0, 32);
}

/**
 * The webhook outbox of `database` streams (issue #29 item 6): a MongoDB collection shared by
 * every node, beside the stream's collection. Each node that reads a change from the change
 * stream upserts its deliveries (`$setOnInsert` under the derived id: the first node adds
 * them, the others change nothing); a node claims a due delivery with one `findOneAndUpdate`
 * (owner and lease), posts it, and marks it done (or schedules its retry) only while it still
 * owns it. A node that dies mid-delivery leaves its claim to expire: another node takes the
 * delivery over and sends it again under the same id. Done deliveries stay `keepDoneMs` (a
 * TTL index), so a node whose follower lags cannot add one again. Webhooks of other streams
 * keep the node's own outbox (webhooks.ts).
 */
export class SharedOutbox {
  private readonly node = randomUUID();
  private readonly prepared = new WeakSet<Db>();
  private readonly aborts = new Set<AbortController>();
  private inFlight = 0;
  /** Woken when no delivery is in flight (close waits for them a moment). */
  private readonly settledWaiters: Array<() => void> = [];
  private readonly sending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private pumping = false;
  private again = false;
  private closed = false;
  /** Per database and stream, the newest cluster cursor whose deliveries this node queued (written each poll: the catch-up mark). */
  private readonly marks = new Map<Db, Map<string, string>>();
  /**
   * Streams whose mark a catch-up is reading: not moved meanwhile (it would hide what the
   * catch-up looks for); what was queued meanwhile is noted once it has read it.
   */
  private readonly heldMarks = new Map<string, { holders: number; deferred: Array<[Db, string]> }>();

  constructor(
    private readonly webhooks: Webhooks,
    private readonly settings: SharedOutboxSettings,
    private readonly webhookSettings: Pick<WebhookSettings, 'maxAttempts' | 'maxAgeMs' | 'retryBaseMs' | 'timeoutMs'>,
    /** The databases of the `database` streams this node follows. */
    private readonly databases: () => Db[],
    /** Whether any webhook may want a `database` stream's change: without one, the outbox is never read. */
    private readonly active: () => boolean,
    private readonly logger: Logger,
  ) {}

  /** Deliveries this node is sending now (tests: which node to kill mid-delivery). */
  get sendingNow(): ReadonlySet<string> {
    return this.sending;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.pump();
      void this.flushMarks();
    }, this.settings.pollMs);
    this.timer.unref();
  }

  /** Whether any webhook may want a `database` stream's change. */
  get wanted(): boolean {
    return this.active();
  }

  /**
   * The newest cluster cursor of `stream` whose deliveries some node queued (outbox-catch-up.ts:
   * a node that starts following afresh queues those of the changes made since, while no node
   * followed). Undefined before any.
   */
  async markOf(db: Db, stream: string): Promise<string | undefined> {
    const found = await db.collection<OutboxMark>(this.settings.collection).findOne({ _id: `mark:${stream}` });
    return typeof found?.cursor === 'string' ? found.cursor : undefined;
  }

  /** Add the deliveries of one change (idempotent across nodes); resolves once the database has them. */
  async enqueue(change: Change, db: Db | undefined): Promise<void> {
    // The mark moves only past a change whose deliveries are in the collection (or that has none).
    const note = (): void => {
      if (db !== undefined && this.active()) this.noteQueued(db, change.stream, change.cursor);
    };
    const targets = this.webhooks.targetsOf(change);
    if (targets.length === 0) return note();
    if (db === undefined) {
      this.logger.error({ stream: change.stream, cursor: change.cursor }, 'webhook deliveries of a database stream could not be queued: no database');
      return;
    }
    const outbox = await this.outboxOf(db);
    const body = webhookBody(change);
    const now = new Date();
    await Promise.all(
      targets.map(async (target) => {
        const delivery: SharedDelivery = {
          _id: deliveryId(change.stream, change.cursor, target.url),
          url: target.url,
          stream: change.stream,
          from_stream: target.fromStream === true,
          body,
          attempts: 0,
          due: now,
          owner: null,
          until: new Date(0),
          created: now,
          done: false,
        };
        // `_id` comes from the filter (a server refuses an update that names the immutable `_id`).
        const { _id, ...fields } = delivery;
        try {
          await outbox.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true });
        } catch (error) {
          // Two nodes upserting the same id at once: the other one added it.
          if ((error as { code?: number }).code !== 11000) throw error;
        }
      }),
    );
    note();
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.flushMarks();
    // Posts in flight get a moment to finish and be recorded: one answered while the node shuts
    // down and not marked done would be sent again by another node (CI saw it). What is still
    // unanswered then is abandoned, its claim left to expire: another node sends it again (same
    // id) once the lease is over. A node killed mid-delivery leaves the same state.
    if (this.inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => this.settledWaiters.push(resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
    }
    for (const abort of this.aborts) abort.abort();
  }

  /** Claim and send what is due, up to MAX_IN_FLIGHT at a time (one pump at a time per node). */
  pump(): void {
    if (this.closed || !this.active()) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      do {
        this.again = false;
        for (const db of this.databases()) {
          while (!this.closed && this.inFlight < MAX_IN_FLIGHT) {
            const claimed = await this.claim(db);
            if (claimed === undefined) break;
            this.inFlight++;
            void this.deliver(db, claimed)
              // The database failed while recording the outcome: the claim expires and another attempt follows.
              .catch((error: unknown) => this.logger.warn({ err: { message: (error as Error).message }, delivery: claimed._id }, 'a shared webhook delivery could not be recorded; it is retried once its claim expires'))
              .finally(() => {
                this.inFlight--;
                if (this.inFlight === 0) for (const wake of this.settledWaiters.splice(0)) wake();
                this.pump();
              });
          }
        }
      } while (this.again && !this.closed);
    })()
      .catch((error: unknown) => this.logger.warn({ err: { message: (error as Error).message } }, 'the shared webhook outbox could not be read; trying again'))
      .finally(() => {
        this.pumping = false;
      });
  }

  /** Keep `stream`'s mark where it is until the returned function is called (a catch-up reads it). */
  holdMark(stream: string): () => void {
    const held = this.heldMarks.get(stream) ?? { holders: 0, deferred: [] };
    held.holders++;
    this.heldMarks.set(stream, held);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--held.holders > 0) return;
      this.heldMarks.delete(stream);
      for (const [db, cursor] of held.deferred) this.noteQueued(db, stream, cursor);
    };
  }

  private noteQueued(db: Db, stream: string, cursor: string): void {
    const held = this.heldMarks.get(stream);
    if (held !== undefined) {
      held.deferred.push([db, cursor]);
      return;
    }
    let streams = this.marks.get(db);
    if (!streams) this.marks.set(db, (streams = new Map()));
    const known = streams.get(stream);
    if (known === undefined || cursor > known) streams.set(stream, cursor);
  }

  /** Write the marks noted since the last time (`$max`: cluster cursors compare as strings). */
  private async flushMarks(): Promise<void> {
    const marks = [...this.marks];
    this.marks.clear();
    for (const [db, streams] of marks) {
      const collection = db.collection<OutboxMark>(this.settings.collection);
      for (const [stream, cursor] of streams) {
        await collection.updateOne({ _id: `mark:${stream}` }, { $max: { cursor } }, { upsert: true }).catch((error: unknown) => {
          // Kept for the next flush: a lost mark only makes a later catch-up look further back.
          this.noteQueued(db, stream, cursor);
          this.logger.warn({ err: { message: (error as Error).message }, stream }, 'the shared webhook outbox mark could not be written');
        });
      }
    }
  }

  private async outboxOf(db: Db): Promise<Collection<SharedDelivery>> {
    const outbox = db.collection<SharedDelivery>(this.settings.collection);
    if (!this.prepared.has(db)) {
      this.prepared.add(db);
      await outbox
        .createIndexes([
          { key: { done: 1, due: 1 }, name: 'due' },
          { key: { finished_at: 1 }, name: 'finished_ttl', expireAfterSeconds: Math.ceil(this.settings.keepDoneMs / 1000) },
        ])
        .catch((error: unknown) => {
          this.prepared.delete(db);
          this.logger.warn({ err: { message: (error as Error).message } }, 'the shared webhook outbox indexes could not be made');
        });
    }
    return outbox;
  }

  /** One due delivery nobody holds (or whose holder's lease is over), now held by this node. */
  private async claim(db: Db): Promise<SharedDelivery | undefined> {
    const outbox = await this.outboxOf(db);
    const now = new Date();
    const found = await outbox.findOneAndUpdate(
      { done: false, due: { $lte: now }, until: { $lte: now } },
      { $set: { owner: this.node, until: new Date(now.getTime() + this.settings.leaseMs) } },
      { sort: { due: 1 }, returnDocument: 'after' },
    );
    return found ?? undefined;
  }

  private async deliver(db: Db, delivery: SharedDelivery): Promise<void> {
    const outbox = await this.outboxOf(db);
    const mine = { _id: delivery._id, owner: this.node };
    const target = { id: delivery._id, url: delivery.url, stream: delivery.stream, fromStream: delivery.from_stream };
    const check = this.webhooks.checkTarget(target);
    if (check === 'dropped') {
      await outbox.updateOne(mine, { $set: { done: true, finished_at: new Date(), dead_reason: 'its stream no longer declares that webhook' } });
      return;
    }
    if (check === 'bad-secret') return this.bury(outbox, delivery, 'its secret_env is not the variable realtime.stream_webhook_secrets maps to its stream');
    // A claim with less of its lease left than a whole post may take (the pump, the database or
    // the event loop was slow since the claim) is handed back unsent: another node could take it
    // over mid-post and send it a second time. It is claimed again at once, with a fresh lease.
    if (delivery.until.getTime() - Date.now() <= this.webhookSettings.timeoutMs) {
      await outbox.updateOne(mine, { $set: { owner: null, until: new Date(0) } });
      return;
    }
    const abort = new AbortController();
    this.aborts.add(abort);
    this.sending.add(delivery._id);
    let failure: string | undefined;
    try {
      failure = await this.webhooks.post(target, delivery.body, check.secret, abort.signal);
    } finally {
      this.aborts.delete(abort);
      this.sending.delete(delivery._id);
    }
    // Answered: recorded even while closing (the database is closed after the outbox).
    if (failure === undefined) {
      await outbox.updateOne(mine, { $set: { done: true, finished_at: new Date(), owner: null } });
      return;
    }
    if (this.closed) return; // aborted by close: the claim expires, another node retries
    const attempts = delivery.attempts + 1;
    const next = nextAttempt(this.webhookSettings, attempts, delivery.created.getTime(), failure);
    if (typeof next === 'string') return this.bury(outbox, { ...delivery, attempts }, next);
    const due = new Date(next);
    this.logger.warn({ url: delivery.url, delivery: delivery._id, attempts, reason: failure }, 'webhook delivery failed; retrying (shared outbox)');
    await outbox.updateOne(mine, { $set: { attempts, due, owner: null, until: new Date(0) } });
  }

  /** Given up: marked dead in the shared outbox, and written to this node's dead-letter file. */
  private async bury(outbox: Collection<SharedDelivery>, delivery: SharedDelivery, reason: string): Promise<void> {
    this.logger.error({ url: delivery.url, delivery: delivery._id, stream: delivery.stream, attempts: delivery.attempts, reason }, 'webhook delivery given up: moved to the dead letters');
    await this.webhooks.deadLetters.add({ id: delivery._id, url: delivery.url, stream: delivery.stream, attempts: delivery.attempts, created: delivery.created.toISOString(), reason, body: delivery.body });
    await outbox.updateOne({ _id: delivery._id, owner: this.node }, { $set: { done: true, finished_at: new Date(), owner: null, dead_reason: reason, attempts: delivery.attempts } });
  }
}
