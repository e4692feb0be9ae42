/**
 * The wire-level stand-in's oplog: one cluster clock (a Timestamp whose increment is the
 * operation's sequence number), every write's change event, resume tokens that encode that
 * sequence number (so a post-batch token is a high-water mark any cursor can resume from),
 * and a bounded window: a token older than what is kept is 286 ChangeStreamHistoryLost.
 */
import { Timestamp, type Document } from 'bson';
import { CommandError, copy, type Applied } from './collection.js';

/** Seconds part of every cluster time (the increment is the sequence number). */
const EPOCH = Math.floor(Date.UTC(2026, 0, 1) / 1000);

export interface HistoryEvent {
  seq: number;
  db: string;
  coll: string;
  operationType: 'insert' | 'update' | 'replace' | 'delete' | 'drop' | 'invalidate';
  id?: unknown;
  /** An insert's or replace's document (sent with the event, as the server does). */
  after?: Document;
  updateDescription?: { updatedFields: Document; removedFields: string[]; truncatedArrays: unknown[] };
  wallTime: Date;
}

export function tokenOf(seq: number): { _data: string } {
  return { _data: `82${seq.toString(16).padStart(16, '0')}` };
}

/** The sequence number a resume token names; a malformed token is the server's 260 InvalidResumeToken. */
export function seqOfToken(token: unknown): number {
  const data = (token as { _data?: unknown } | null | undefined)?._data;
  if (typeof data !== 'string' || !/^82[0-9a-f]{16}$/.test(data)) throw new CommandError(260, 'Invalid resume token (wire stand-in)', { errorLabels: ['NonResumableChangeStreamError'] });
  return parseInt(data.slice(2), 16);
}

export class History {
  private seq = 0;
  readonly events: HistoryEvent[] = [];
  /** Sequence numbers below this are no longer kept (an oplog that rolled over). */
  keptFrom = 1;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly keep = 10_000) {}

  /** The cluster time of the newest operation (what replies carry as `operationTime`). */
  now(): Timestamp {
    return new Timestamp({ t: EPOCH, i: this.seq });
  }

  get current(): number {
    return this.seq;
  }

  /** A write that changes no document still moves the clock (as every oplog entry does). */
  tick(): void {
    this.seq += 1;
  }

  record(db: string, coll: string, applied: Applied): void {
    const event: HistoryEvent = { seq: ++this.seq, db, coll, operationType: applied.type, id: copy({ v: applied.id }).v, wallTime: new Date() };
    if (applied.type === 'insert' || applied.type === 'replace') event.after = copy(applied.after);
    if (applied.type === 'update') event.updateDescription = { updatedFields: copy(applied.fields), removedFields: [...applied.removed], truncatedArrays: [] };
    this.push(event);
  }

  recordDrop(db: string, coll: string): void {
    this.push({ seq: ++this.seq, db, coll, operationType: 'drop', wallTime: new Date() });
    this.push({ seq: ++this.seq, db, coll, operationType: 'invalidate', wallTime: new Date() });
  }

  private push(event: HistoryEvent): void {
    this.events.push(event);
    if (this.events.length > this.keep) {
      const dropped = this.events.splice(0, this.events.length - this.keep);
      this.keptFrom = dropped[dropped.length - 1]!.seq + 1;
    }
    for (const wake of [...this.waiters]) wake();
  }

  /** Forget everything so far: older resume tokens now get 286. */
  forget(): void {
    this.keptFrom = this.seq + 1;
    this.events.length = 0;
  }

  /** Events of one namespace after `seq` (exclusive); 'lost' when the window no longer holds `seq`. */
  after(db: string, coll: string, seq: number): HistoryEvent[] | 'lost' {
    if (seq + 1 < this.keptFrom) return 'lost';
    return this.events.filter((e) => e.seq > seq && e.db === db && e.coll === coll);
  }

  /** Resolves at the next recorded event, or after `ms`, or when `cancel` is called. */
  waitForEvent(ms: number): { done: Promise<void>; cancel: () => void } {
    let cancel: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.waiters.add(finish);
      cancel = finish;
    });
    return { done, cancel };
  }
}
