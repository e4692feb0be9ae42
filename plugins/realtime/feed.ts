import { randomBytes } from 'node:crypto';
import { AppError, type Logger } from '../../kernel/index.js';
import { JsonlLog } from './jsonl-log.js';

export type ChangeEvent = 'created' | 'updated' | 'deleted';

/** One change of one entry, as the feed keeps it. */
export interface Change {
  /** Orders the change among every change of every stream: `<run>-<seq>`. */
  cursor: string;
  seq: number;
  stream: string;
  event: ChangeEvent;
  /** The entry key. */
  id: unknown;
  /** The entry as GET shows it (JSON text; protected fields hidden), or `null` when deleted. */
  data: string;
  /** The stored attributes filters are checked against (the last version for a delete). */
  match: Record<string, unknown>;
  /** Milliseconds since the epoch. */
  at: number;
}

export interface FeedLimits {
  /** Changes kept per stream. */
  count: number;
  /** Changes older than this are dropped (seconds). */
  maxAgeSeconds: number;
}

export type ChangeListener = (change: Change) => void;

/** A line of the history file (written by compaction) naming a run (a boot of this server) that made changes. */
interface RunMark {
  run: string;
}

/**
 * A line of the history file saying that changes of a stream up to a seq are gone (trimmed,
 * or the stream deleted): written by compaction, which removes the changes themselves, and
 * when a stream is deleted. Without it a restarted feed would take the oldest change left
 * for the first one and replay from a cursor before it with a silent gap.
 */
interface FloorMark {
  floors: Array<[string, number]>;
}

type HistoryLine = Change | RunMark | FloorMark;

/** Runs remembered (a boot each): cursors of older ones answer 410. */
const MAX_RUNS = 1000;

/** The position a client resumes from: every change after it is replayed. */
export interface Resume {
  changes: Change[];
}

/**
 * The change feed (issue #19): every change of every stream gets a cursor that orders it,
 * and each stream keeps a bounded history (count and age) so a client can resume. The
 * history is kept in a file of JSON lines, so a client resumes across a restart of the
 * server too.
 *
 * Cursors are `<run>-<seq>`: `seq` grows across restarts, `run` names the boot that handed
 * it out. A cursor of an earlier run is honoured only up to the last change that run wrote
 * to the history file: a change acknowledged just before a crash and lost from the file
 * (it is written without fsync) would otherwise look "already seen" when its number is
 * handed out again, so such a cursor answers 410 and the client reads the list again.
 * A cursor of a run this feed never had (another server's) answers 410 too.
 */
export class ChangeFeed {
  private readonly run = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  private seq = 0;
  /** The last seq read from the history file at boot: cursors of earlier runs are valid up to it. */
  private persistedSeq = 0;
  /**
   * The runs of this feed (this data folder) found in the history file, newest last: a cursor
   * of any other run was handed out by another server (another node behind the same load
   * balancer), whose numbers mean nothing here, so it answers 410 instead of replaying the
   * wrong changes.
   */
  private readonly runs = new Set<string>();
  private lastCursor: string | undefined;
  private readonly history = new Map<string, Change[]>();
  /** Per stream, the largest seq dropped from its history (a cursor before it missed changes). */
  private readonly floor = new Map<string, number>();
  private readonly listeners = new Map<string, Set<ChangeListener>>();
  private readonly log: JsonlLog<HistoryLine>;
  private linesInFile = 0;

  constructor(
    file: string,
    private readonly limits: FeedLimits,
    private readonly logger: Logger,
  ) {
    this.log = new JsonlLog<HistoryLine>(file, false, logger);
  }

  /** Read the history file (boot). */
  async load(): Promise<void> {
    const records = await this.log.read();
    this.linesInFile = records.length;
    for (const record of records) {
      if (record === null || typeof record !== 'object') continue;
      if ('run' in record && typeof record.run === 'string') {
        this.remember(record.run);
        continue;
      }
      if ('floors' in record && Array.isArray(record.floors)) {
        for (const pair of record.floors) {
          if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'number') this.raiseFloor(pair[0], pair[1]);
        }
        continue;
      }
      const change = record as Change;
      if (typeof change?.seq !== 'number' || typeof change.stream !== 'string' || typeof change.cursor !== 'string' || change.seq <= this.seq) continue;
      this.seq = change.seq;
      this.lastCursor = change.cursor;
      this.remember(change.cursor.slice(0, change.cursor.lastIndexOf('-')));
      this.keep(change);
    }
    this.persistedSeq = this.seq;
    for (const stream of this.history.keys()) this.trim(stream, Date.now());
  }

  /** Record a change and tell the stream's subscribers. */
  publish(stream: string, event: ChangeEvent, id: unknown, data: string, match: Record<string, unknown>): Change {
    const seq = ++this.seq;
    const change: Change = { cursor: `${this.run}-${seq}`, seq, stream, event, id, data, match, at: Date.now() };
    if (this.lastCursor === undefined || !this.lastCursor.startsWith(`${this.run}-`)) this.remember(this.run);
    this.lastCursor = change.cursor;
    this.keep(change);
    this.trim(stream, change.at);
    this.appendLine(change);
    for (const listener of this.listeners.get(stream) ?? []) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error({ err: error, stream }, 'a change subscriber failed');
      }
    }
    return change;
  }

  /**
   * The changes of `stream` after `cursor` (all kept ones when undefined), then every new
   * one to `listener` (when given) with no gap and no duplicate: both happen in one turn of
   * the event loop, so no change can fall between the replay and the subscription.
   * 410 when changes after the cursor are no longer kept; 400 for a malformed cursor.
   */
  resume(stream: string, cursor: string | undefined, listener?: ChangeListener): { replay: Change[]; unsubscribe: () => void } {
    // An idle stream's history ages too: what is past max age is dropped before any answer.
    this.trim(stream, Date.now());
    const after = cursor === undefined ? undefined : this.positionOf(stream, cursor);
    const kept = this.history.get(stream) ?? [];
    const replay = after === undefined ? [] : kept.filter((c) => c.seq > after);
    if (listener === undefined) return { replay, unsubscribe: () => undefined };
    let set = this.listeners.get(stream);
    if (!set) this.listeners.set(stream, (set = new Set()));
    set.add(listener);
    return {
      replay,
      unsubscribe: () => {
        set.delete(listener);
        if (set.size === 0 && this.listeners.get(stream) === set) this.listeners.delete(stream);
      },
    };
  }

  /** Every kept change of a stream (oldest first). */
  kept(stream: string): Change[] {
    this.trim(stream, Date.now());
    return this.history.get(stream) ?? [];
  }

  /**
   * The cursor of the newest change (for a client starting live), or undefined before any.
   * It keeps the run that made the change, so cursors handed out name only runs that
   * wrote changes to the history file (booting and reading write nothing).
   */
  get latest(): string | undefined {
    return this.lastCursor;
  }

  /** Subscribers right now, over every stream. */
  get subscribers(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  /** Forget a deleted stream's history. */
  drop(stream: string): void {
    const kept = this.history.get(stream);
    this.history.delete(stream);
    if (kept && kept.length > 0) {
      const last = kept[kept.length - 1]!.seq;
      this.floor.set(stream, Math.max(last, this.floor.get(stream) ?? 0));
      this.appendLine({ floors: [[stream, last]] });
    }
  }

  /** Changes of `stream` up to `seq` are gone: forget any still kept, and refuse cursors before. */
  private raiseFloor(stream: string, seq: number): void {
    this.floor.set(stream, Math.max(seq, this.floor.get(stream) ?? 0));
    const kept = this.history.get(stream);
    if (!kept) return;
    const left = kept.filter((c) => c.seq > seq);
    if (left.length > 0) this.history.set(stream, left);
    else this.history.delete(stream);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.compacting;
    await this.log.idle();
  }

  private appendLine(record: HistoryLine): void {
    void this.log.append(record).catch((error: unknown) => this.logger.error({ err: error, path: this.log.file }, 'the change history could not be written: resuming across a restart may answer 410'));
    if (++this.linesInFile > 2 * this.limits.count * Math.max(1, this.history.size) + 1000) this.compact();
  }

  /** Note a run of this feed (the newest MAX_RUNS are kept: older cursors are long past the history). */
  private remember(run: string): void {
    this.runs.delete(run);
    this.runs.add(run);
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.values().next().value!);
  }

  /** The seq after which to replay, or a 410/400 AppError. */
  private positionOf(stream: string, cursor: string): number {
    const match = /^([0-9a-z]{1,32})-(\d{1,15})$/.exec(cursor);
    if (!match) throw new AppError(400, `The cursor [${cursor.slice(0, 64)}] is not one this server hands out.`);
    const [, run, digits] = match;
    const seq = Number(digits);
    const oldest = this.oldestCursor(stream);
    const gone = (): AppError =>
      new AppError(410, `Changes after the cursor [${cursor}] are no longer kept: read the list again${oldest ? ` (the oldest kept cursor is ${oldest})` : ''}.`, [
        { message: 'The cursor is older than the change history.', meta: { oldest: oldest ?? null, latest: this.latest ?? null } },
      ]);
    if (run !== this.run && !this.runs.has(run!)) throw gone();
    if (run === this.run ? seq > this.seq : seq > this.persistedSeq) throw gone();
    if (seq < (this.floor.get(stream) ?? 0)) throw gone();
    return seq;
  }

  private oldestCursor(stream: string): string | undefined {
    const kept = this.history.get(stream);
    if (!kept || kept.length === 0) return this.latest;
    // Replaying from just before the oldest kept change gives all of them.
    const first = kept[0]!;
    return first.seq > 1 ? `${this.run}-${first.seq - 1}` : undefined;
  }

  private keep(change: Change): void {
    let kept = this.history.get(change.stream);
    if (!kept) this.history.set(change.stream, (kept = []));
    kept.push(change);
  }

  /** Drop what is over the count or the age (oldest first). */
  private trim(stream: string, now: number): void {
    const kept = this.history.get(stream);
    if (!kept) return;
    const oldestAllowed = now - this.limits.maxAgeSeconds * 1000;
    let drop = Math.max(0, kept.length - this.limits.count);
    while (drop < kept.length && kept[drop]!.at < oldestAllowed) drop++;
    if (drop === 0) return;
    this.floor.set(stream, Math.max(kept[drop - 1]!.seq, this.floor.get(stream) ?? 0));
    kept.splice(0, drop);
  }

  /** Rewrite the history file with only what is kept. */
  /** The compaction running now (close waits for it). */
  private compacting: Promise<void> | undefined;
  private compact(): void {
    this.compacting ??= this.rewriteKept().finally(() => {
      this.compacting = undefined;
    });
  }

  private async rewriteKept(): Promise<void> {
    try {
      await this.log.rewrite(() => {
        const all: HistoryLine[] = [...this.runs].map((run) => ({ run }));
        if (this.floor.size > 0) all.push({ floors: [...this.floor] });
        all.push(...[...this.history.values()].flat().sort((a, b) => a.seq - b.seq));
        this.linesInFile = all.length;
        return all;
      });
    } catch (error) {
      this.logger.error({ err: error, path: this.log.file }, 'compacting the change history failed');
    }
  }
}
