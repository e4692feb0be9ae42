/**
 * A change stream cursor of the wire-level stand-in: opened by `aggregate` with a
 * `$changeStream` stage (`resumeAfter`, `startAfter`, `startAtOperationTime`, or now), read by
 * `getMore` (waiting up to its `maxTimeMS` for an event, as a tailable await cursor does), each
 * batch ending with a `postBatchResumeToken`. `fullDocument: 'updateLookup'` reads an
 * updated document when the event is sent (so it may show later writes, or null).
 * Pre-images are never kept (a collection without `changeStreamPreAndPostImages`).
 */
import { Long, Timestamp, type Document } from 'bson';
import { CommandError, copy, type WireCollection } from './collection.js';
import { seqOfToken, tokenOf, type History, type HistoryEvent } from './history.js';

const HISTORY_LOST = (): CommandError =>
  new CommandError(286, 'Resume of change stream was not possible, as the resume point may no longer be in the oplog (wire stand-in)', {
    codeName: 'ChangeStreamHistoryLost',
    errorLabels: ['NonResumableChangeStreamError'],
  });

export class ChangeCursor {
  private last: number;
  closed = false;
  private cancelWait: (() => void) | undefined;

  constructor(
    readonly id: number,
    readonly db: string,
    readonly coll: string,
    stage: Document,
    private readonly history: History,
    private readonly lookup: (db: string, coll: string) => WireCollection | undefined,
  ) {
    const from = stage.resumeAfter ?? stage.startAfter;
    if (from !== undefined) this.last = seqOfToken(from);
    else if (stage.startAtOperationTime instanceof Timestamp) this.last = stage.startAtOperationTime.low - 1; // inclusive, as on the server
    else this.last = history.current;
    this.fullDocument = typeof stage.fullDocument === 'string' ? stage.fullDocument : 'default';
    if (this.last + 1 < history.keptFrom) throw HISTORY_LOST();
  }

  private readonly fullDocument: string;

  get ns(): string {
    return `${this.db}.${this.coll}`;
  }

  /** The events ready now (up to the first invalidate, which closes the cursor). */
  private batch(): Document[] {
    const events = this.history.after(this.db, this.coll, this.last);
    if (events === 'lost') throw HISTORY_LOST();
    const out: Document[] = [];
    for (const event of events) {
      out.push(this.render(event));
      this.last = event.seq;
      if (event.operationType === 'invalidate') {
        this.closed = true;
        break;
      }
    }
    return out;
  }

  private render(event: HistoryEvent): Document {
    const change: Document = {
      _id: tokenOf(event.seq),
      operationType: event.operationType,
      clusterTime: new Timestamp({ t: this.history.now().high, i: event.seq }),
      wallTime: event.wallTime,
    };
    if (event.operationType !== 'invalidate') change.ns = { db: event.db, coll: event.coll };
    if (event.id !== undefined) change.documentKey = { _id: event.id };
    if (event.after) change.fullDocument = copy(event.after);
    if (event.operationType === 'update') {
      change.updateDescription = event.updateDescription;
      if (this.fullDocument === 'updateLookup') {
        const current = this.lookup(event.db, event.coll)?.select({ _id: event.id })[0];
        change.fullDocument = current ?? null;
      }
    }
    return change;
  }

  /** The reply's `cursor` document: the id is 0 once the cursor is closed (after an invalidate). */
  private reply(key: 'firstBatch' | 'nextBatch', documents: Document[]): Document {
    const postBatchResumeToken = documents.length > 0 ? documents[documents.length - 1]!._id : tokenOf(Math.max(this.last, this.history.current));
    if (documents.length === 0) this.last = Math.max(this.last, this.history.current);
    return { id: Long.fromNumber(this.closed ? 0 : this.id), ns: this.ns, [key]: documents, postBatchResumeToken };
  }

  first(): Document {
    return this.reply('firstBatch', this.batch());
  }

  /** A getMore: the ready events, else whatever comes within `maxTimeMS`, else an empty batch. */
  async more(maxTimeMS: number): Promise<Document> {
    let documents = this.batch();
    if (documents.length === 0 && !this.closed) {
      const wait = this.history.waitForEvent(maxTimeMS);
      this.cancelWait = wait.cancel;
      await wait.done;
      this.cancelWait = undefined;
      if (this.closed) return { id: Long.fromNumber(0), ns: this.ns, nextBatch: [], postBatchResumeToken: tokenOf(this.last) };
      documents = this.batch();
    }
    return this.reply('nextBatch', documents);
  }

  kill(): void {
    this.closed = true;
    this.cancelWait?.();
  }
}
