import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { AppError, type Logger } from '../../kernel/index.js';
import { isClusterCursor } from './cluster-cursor.js';
import { importLegacyHistory } from './legacy-files.js';
import { SegmentLog, type RecordRef, type Segment } from './segment-log.js';

export type ChangeEvent = 'created' | 'updated' | 'deleted';

/** One change of one entry, as the feed hands it out. */
export interface Change {
  /** Orders the change among every change of every stream: `<run>-<seq>`. */
  cursor: string;
  seq: number;
  stream: string;
  event: ChangeEvent;
  /** The entry key. */
  id: unknown;
  /** The entry as GET shows it (JSON text; protected fields hidden), or `null` when deleted or omitted. */
  data: string;
  /**
   * The stored attributes filters are checked against (the last version for a delete);
   * null when they were too large to keep (an omitted change: every filter lets it through).
   */
  match: Record<string, unknown> | null;
  /** Milliseconds since the epoch. */
  at: number;
  /** True when the entry was larger than `history.max_change_bytes`: clients re-read it. */
  omitted?: boolean;
  /** The stored attributes before an update, kept when access rules are on (issue #28: a move out of a view is a delete to that viewer). */
  before?: Record<string, unknown> | null;
  /** Its wire forms, made once per change however many subscribers get it (subscription.ts). */
  wire?: { json?: string; ws?: string; sse?: Buffer };
}

export interface FeedLimits {
  /** Changes kept per stream (a logical limit over the byte and age bounds). */
  count: number;
  /** Changes older than this are dropped (seconds). */
  maxAgeSeconds: number;
  /** Bytes of history on disk (every segment). */
  maxBytes: number;
  /** Bytes of memory for the history's index (an estimate per kept change). */
  memoryBytes: number;
  /** An entry larger than this (as JSON) is kept and sent as a reference (stream, id, cursor). */
  maxChangeBytes: number;
}

export type ChangeListener = (change: Change) => void;

/** A subscription's filter: changes are checked once per distinct `key`, however many share it. */
export interface ChangeFilter {
  key: string;
  accepts(change: Change): boolean;
  /**
   * The change as this filter's subscribers see it, or undefined to skip it; when present it
   * is used instead of `accepts` (access rules, issue #28: plugins/realtime/access-view.ts).
   */
  view?(change: Change): Change | undefined;
}

/** What a filter delivers of a change: itself, a view of it, or nothing. */
export function deliverable(filter: ChangeFilter, change: Change): Change | undefined {
  if (filter.view !== undefined) return filter.view(change);
  return filter.accepts(change) ? change : undefined;
}

/** What memory holds of a kept change: where its line is, never its body. */
export interface Kept {
  readonly seq: number;
  readonly at: number;
  readonly ref: RecordRef;
  /** A `database` stream's change: its cluster cursor (cluster-cursor.ts), the same on every node. */
  readonly pos?: string;
}

/** The streams a segment holds changes of (their largest seq there) and its newest change's time. */
interface SegmentInfo {
  streams: Map<string, number>;
  lastAt: number;
}

/** Memory one kept change costs in the index (its Kept object, array slot, a cluster cursor), for the budget. */
export const KEPT_COST = 160;
/** Runs remembered (a boot each): cursors of older ones answer 410. */
const MAX_RUNS = 256;
/** Cursors are `<run>-<seq>`. */
const CURSOR = /^([0-9a-z]{1,32})-(\d{1,15})$/;

/** One stream's kept changes, oldest first; dropped from the front without moving the rest each time. */
class StreamHistory {
  items: Kept[] = [];
  head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  first(): Kept | undefined {
    return this.items[this.head];
  }

  /** Forget the `n` oldest. */
  shift(n: number): void {
    this.head += n;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** The index of the first change whose cluster cursor is > `cursor` (binary search: they are kept in cluster order). */
  afterPos(cursor: string): number {
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.items[mid]!.pos ?? '') <= cursor) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The index of the first change with seq > `after` (binary search). */
  after(after: number): number {
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * The change feed (issues #19, #26): every change of every stream gets a cursor that orders
 * it, and is kept in a log of segment files on disk, bounded by bytes, age and (per stream)
 * count, so a client resumes, across a restart of the server too. Memory holds only where
 * each kept change lies (`Kept`), within its own byte budget; bodies are read back from
 * disk for a replay, a page at a time.
 *
 * Cursors are `<run>-<seq>`: `seq` grows across restarts, `run` names the boot that handed
 * it out. A cursor of an earlier run is honoured only up to the last change that run wrote
 * to the history: a change acknowledged just before a crash and lost from the file (it is
 * written without fsync) would otherwise look "already seen" when its number is handed out
 * again, so such a cursor answers 410 and the client reads the list again. A cursor of a
 * run this feed never had (another server's) answers 410 too.
 */
export class ChangeFeed {
  private readonly run = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  private seq = 0;
  /** The last seq read at boot: cursors of earlier runs are valid up to it. */
  private persistedSeq = 0;
  /** The runs of this feed (this data folder), newest last; a cursor of any other run answers 410. */
  private readonly runs = new Set<string>();
  /** The run `remember` saw last (the Set's last one). */
  private newestRun: string | undefined;
  private lastCursor: string | undefined;
  private readonly history = new Map<string, StreamHistory>();
  private keptCount = 0;
  /** Per stream, the largest seq dropped from its history (a cursor before it missed changes). */
  private readonly floor = new Map<string, number>();
  /** Below this seq every stream may have lost changes (segments dropped at boot, unknown streams). */
  private globalFloor = 0;
  private readonly listeners = new Map<string, Map<string, { filter: ChangeFilter; set: Set<ChangeListener> }>>();
  private subscriberCount = 0;
  /**
   * `database` streams (issue #29 item 6): the local history holds every change with a
   * cluster cursor >= `from` (this node followed the collection without a hole since), the
   * first of them after local seq `seq`. In memory: a restart follows afresh.
   */
  private readonly coverage = new Map<string, { from: string; seq: number }>();
  readonly log: SegmentLog;

  constructor(
    private readonly folder: string,
    private readonly limits: FeedLimits,
    private readonly logger: Logger,
  ) {
    this.log = new SegmentLog(folder, 'changes', { segmentBytes: Math.max(64 * 1024, Math.floor(limits.maxBytes / 8)), maxLineBytes: this.maxLineBytes, durable: false }, logger);
    // Each segment starts with what a restart needs even once every older segment is gone.
    this.log.header = () => JSON.stringify({ runs: [...this.runs].slice(-MAX_RUNS), floors: [...this.floor], floor: this.globalFloor });
  }

  /** The longest line a change may take: its data and its match attributes, each at most maxChangeBytes. */
  get maxLineBytes(): number {
    return 2 * this.limits.maxChangeBytes + 4096;
  }

  /** Read the history (boot): an older version's single file first, then the segments, as streams of lines. */
  async load(): Promise<void> {
    await importLegacyHistory(path.join(this.folder, 'changes.jsonl'), path.join(this.folder, 'changes-0.jsonl'), this.limits.maxBytes, this.maxLineBytes, this.logger);
    const dropped = await this.log.open(this.limits.maxBytes, (line, ref) => this.readLine(line, ref));
    // Segments dropped at boot took changes of streams no header names: a cursor before the
    // oldest change left answers 410 for every stream.
    if (dropped > 0) {
      let oldest = Infinity;
      for (const h of this.history.values()) oldest = Math.min(oldest, h.first()?.seq ?? Infinity);
      if (oldest !== Infinity) this.globalFloor = Math.max(this.globalFloor, oldest - 1);
    }
    this.persistedSeq = this.seq;
    const now = Date.now();
    for (const stream of this.history.keys()) this.trim(stream, now);
    this.enforceBudgets(now);
  }

  private readLine(line: string, ref: RecordRef): void {
    // A change line (all but a few per segment) without parsing its body: most of a boot's read.
    const head = changeHead(line);
    if (head !== undefined) return this.readChange(head.seq, head.stream, head.cursor, head.at, ref);
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (record === null || typeof record !== 'object') return;
    if (Array.isArray(record.runs)) for (const run of record.runs) if (typeof run === 'string') this.remember(run);
    if (typeof record.run === 'string') this.remember(record.run);
    if (typeof record.floor === 'number') this.globalFloor = Math.max(this.globalFloor, record.floor);
    if (Array.isArray(record.floors)) {
      for (const pair of record.floors) {
        if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'number') this.raiseFloor(pair[0], pair[1]);
      }
    }
    const { seq, stream, cursor, at } = record;
    if (typeof seq !== 'number' || typeof stream !== 'string' || typeof cursor !== 'string') return;
    this.readChange(seq, stream, cursor, typeof at === 'number' ? at : Date.now(), ref);
  }

  private readChange(seq: number, stream: string, cursor: string, at: number, ref: RecordRef): void {
    if (seq <= this.seq) return;
    this.seq = seq;
    const cluster = isClusterCursor(cursor);
    if (!cluster) {
      this.lastCursor = cursor;
      this.remember(cursor.slice(0, cursor.lastIndexOf('-')));
    }
    this.keep(stream, { seq, at, ref, pos: cluster ? cursor : undefined });
  }

  /**
   * Record a change and tell the stream's subscribers (each filter checked once). `pos`: a
   * `database` stream's change, with its cluster cursor (the feed of such a stream is filled
   * in the order of the collection's change stream: cluster-changes.ts).
   */
  publish(stream: string, event: ChangeEvent, id: unknown, data: string, match: Record<string, unknown>, before?: Record<string, unknown>, pos?: string): Change {
    const seq = ++this.seq;
    const at = Date.now();
    const change: Change = { cursor: pos ?? `${this.run}-${seq}`, seq, stream, event, id, data, match, at };
    if (pos === undefined) {
      if (this.lastCursor === undefined || !this.lastCursor.startsWith(`${this.run}-`)) this.remember(this.run);
      this.lastCursor = change.cursor;
    }
    let matchJson = 'null';
    if (data.length > this.limits.maxChangeBytes) {
      // Too large to copy into the feed and to every subscriber: a reference, clients re-read
      // the entry; its attributes (at least as large, but for protected fields) are not kept either.
      change.data = 'null';
      change.omitted = true;
      change.match = null;
    } else {
      matchJson = JSON.stringify(match);
      if (matchJson.length > this.limits.maxChangeBytes) {
        change.match = null;
        matchJson = 'null';
      }
    }
    let beforeJson = '';
    if (before !== undefined && change.match !== null) {
      const text = JSON.stringify(before);
      change.before = text.length > this.limits.maxChangeBytes ? null : before;
      beforeJson = `,"before":${change.before === null ? 'null' : text}`;
    }
    const line = `{"cursor":${JSON.stringify(change.cursor)},"seq":${seq},"stream":${JSON.stringify(stream)},"event":"${event}","id":${JSON.stringify(id ?? null)},"data":${JSON.stringify(change.data)},"match":${matchJson}${beforeJson},"at":${at}${change.omitted ? ',"omitted":true' : ''}}`;
    const { ref, written } = this.log.append(line);
    written.catch((error: unknown) => {
      // Not in the history: a cursor before it must not replay past the hole.
      this.raiseFloor(stream, seq);
      this.logger.error({ err: error, path: ref.segment.file }, 'the change history could not be written: resuming across this change answers 410');
    });
    this.keep(stream, { seq, at, ref, pos });
    this.trim(stream, at);
    this.enforceBudgets(at);
    this.tell(change);
    return change;
  }

  private tell(change: Change): void {
    const groups = this.listeners.get(change.stream);
    if (groups === undefined) return;
    for (const { filter, set } of groups.values()) {
      let seen: Change | undefined;
      try {
        seen = deliverable(filter, change);
      } catch (error) {
        this.logger.error({ err: error, stream: change.stream }, 'a change filter failed');
        continue;
      }
      if (seen === undefined) continue;
      for (const listener of set) {
        try {
          listener(seen);
        } catch (error) {
          this.logger.error({ err: error, stream: change.stream }, 'a change subscriber failed');
        }
      }
    }
  }

  /**
   * Where a client resumes: the seq after which to replay (`cursor` undefined: from the
   * oldest kept change). 400 for a malformed cursor, 410 when changes after it are gone.
   */
  position(stream: string, cursor: string | undefined): number {
    this.trim(stream, Date.now());
    if (cursor !== undefined && isClusterCursor(cursor)) return this.clusterPosition(stream, cursor).after;
    if (cursor === undefined) return Math.max(this.floorOf(stream), (this.history.get(stream)?.first()?.seq ?? this.seq + 1) - 1);
    const match = CURSOR.exec(cursor);
    if (!match) throw new AppError(400, `The cursor [${cursor.slice(0, 64)}] is not one this server hands out.`);
    const [, run, digits] = match;
    const seq = Number(digits);
    if (run !== this.run && !this.runs.has(run!)) throw this.gone(stream, cursor);
    if (run === this.run ? seq > this.seq : seq > this.persistedSeq) throw this.gone(stream, cursor);
    if (seq < this.floorOf(stream)) throw this.gone(stream, cursor);
    return seq;
  }

  /**
   * A `database` stream's follower started afresh (boot, or its resume point was dropped):
   * from now on the history holds every change with a cluster cursor >= `from`.
   */
  cover(stream: string, from: string): void {
    this.coverage.set(stream, { from, seq: this.seq });
  }

  /**
   * Whether this node's history cannot serve a cluster cursor (it is older than what this run
   * followed, or than what retention left): the database's history is read back (cluster-replay.ts).
   */
  beforeCoverage(stream: string, cursor: string): boolean {
    return this.localSpot(stream, cursor) === undefined;
  }

  /** Whether the stream's history is kept by cluster position (a `database` stream followed on this node). */
  covers(stream: string): boolean {
    return this.coverage.has(stream);
  }

  /**
   * Where a client with a cluster cursor resumes on this node: the local seq after which to
   * replay, and `skipThrough` when this node has not yet read as far as the cursor (its own
   * follower lags): changes up to it, when they come, are not sent again. 410 when this node
   * did not follow the collection back then (it booted, or restarted its follower, after it).
   */
  clusterPosition(stream: string, cursor: string, caughtUp = false): { after: number; skipThrough?: string } {
    const covered = this.coverage.get(stream);
    // `caughtUp`: a replay read the database's history past `cursor` to its end; every later
    // change reaches this feed through the follower, and whatever it holds after the cursor is complete.
    const kept = this.history.get(stream);
    if (caughtUp) {
      if (covered === undefined) return { after: this.seq, skipThrough: cursor };
      // What this run kept after the cursor (what it kept up to it, the replay sent).
      const at = kept === undefined ? -1 : kept.afterPos(cursor);
      const after = kept !== undefined && at > kept.head ? kept.items[at - 1]!.seq : covered.seq;
      return { after: Math.max(after, covered.seq, this.floorOf(stream)), skipThrough: cursor };
    }
    const spot = this.localSpot(stream, cursor);
    if (spot === undefined) throw this.gone(stream, cursor);
    return spot;
  }

  /** Where the local history serves a cluster cursor from, or undefined when it cannot (clusterPosition's 410). */
  private localSpot(stream: string, cursor: string): { after: number; skipThrough?: string } | undefined {
    const covered = this.coverage.get(stream);
    const kept = this.history.get(stream);
    if (covered === undefined || cursor < covered.from) return undefined;
    if (kept === undefined || kept.size === 0) {
      // Nothing kept: fine only if nothing this node followed was dropped since.
      if (this.floorOf(stream) > covered.seq) return undefined;
      return { after: this.seq, skipThrough: cursor };
    }
    const at = kept.afterPos(cursor);
    if (at === kept.head) {
      // Every kept change is after the cursor: complete only if none of this run was dropped.
      if (this.floorOf(stream) > covered.seq) return undefined;
      return { after: Math.max(covered.seq, kept.items[at]!.seq - 1) };
    }
    const after = kept.items[at - 1]!.seq;
    return at === kept.items.length ? { after, skipThrough: cursor } : { after };
  }

  /** The newest cursor of a stream (a `database` stream's: its cluster cursor), for a client starting from now. */
  latestOf(stream: string): string | undefined {
    const covered = this.coverage.get(stream);
    if (covered === undefined) return this.lastCursor;
    const kept = this.history.get(stream);
    const last = kept?.items[kept.items.length - 1];
    return last !== undefined && last.seq > covered.seq && last.pos !== undefined ? last.pos : covered.from;
  }

  /**
   * Kept changes of `stream` after `after` (where they lie, not their bodies): up to `max`
   * of them and about `maxBytes` of history (always at least one). 410 when some after it are gone.
   */
  after(stream: string, after: number, max: number, maxBytes = Infinity): Kept[] {
    if (after < this.floorOf(stream)) throw this.gone(stream, `${this.run}-${after}`);
    const kept = this.history.get(stream);
    if (kept === undefined) return [];
    const from = kept.after(after);
    let to = from;
    let bytes = 0;
    while (to < kept.items.length && to - from < max && (to === from || bytes + kept.items[to]!.ref.length <= maxBytes)) bytes += kept.items[to++]!.ref.length;
    return kept.items.slice(from, to);
  }

  /**
   * The changes kept at these places, read back from the history; undefined for a line that
   * does not parse (a boot reads only a change line's head: a line damaged in its middle is
   * found here, logged, and skipped as a boot that parsed it whole would have skipped it).
   */
  async read(places: readonly Kept[]): Promise<Array<Change | undefined>> {
    const lines = await Promise.all(places.map((k) => this.log.read(k.ref)));
    return lines.map((line, i) => {
      try {
        return parseChange(line);
      } catch (error) {
        const { ref, seq } = places[i]!;
        this.logger.warn({ err: error, path: ref.segment.file, offset: ref.offset, seq }, 'a change of the history cannot be read: it is skipped');
        return undefined;
      }
    });
  }

  /** Every new change of `stream` that passes `filter` to `listener`, until the returned function is called. */
  subscribe(stream: string, filter: ChangeFilter, listener: ChangeListener): () => void {
    let groups = this.listeners.get(stream);
    if (!groups) this.listeners.set(stream, (groups = new Map()));
    let group = groups.get(filter.key);
    if (!group) groups.set(filter.key, (group = { filter, set: new Set() }));
    group.set.add(listener);
    this.subscriberCount++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.subscriberCount--;
      group.set.delete(listener);
      if (group.set.size === 0 && groups.get(filter.key) === group) groups.delete(filter.key);
      if (groups.size === 0 && this.listeners.get(stream) === groups) this.listeners.delete(stream);
    };
  }

  /**
   * The cursor of the newest change (for a client starting live), or undefined before any.
   * It keeps the run that made the change, so cursors handed out name only runs that
   * wrote changes to the history (booting and reading write nothing).
   */
  get latest(): string | undefined {
    return this.lastCursor;
  }

  /** The seq of the newest change: a client starting live replays what comes after it. */
  get head(): number {
    return this.seq;
  }

  /** Feed listeners right now, over every stream. */
  get subscribers(): number {
    return this.subscriberCount;
  }

  /** For /readyz details and tests: what the history holds. */
  report(): { kept: number; bytes: number; segments: number; index_bytes: number } {
    return { kept: this.keptCount, bytes: this.log.totalBytes, segments: this.log.segments.length, index_bytes: this.keptCount * KEPT_COST };
  }

  /** Forget a deleted stream's history. */
  drop(stream: string): void {
    this.coverage.delete(stream);
    const kept = this.history.get(stream);
    this.history.delete(stream);
    if (kept && kept.size > 0) {
      this.keptCount -= kept.size;
      const last = kept.items[kept.items.length - 1]!.seq;
      this.raiseFloor(stream, last);
      this.log.append(JSON.stringify({ floors: [[stream, last]] })).written.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.log.close();
  }

  private gone(stream: string, cursor: string, message = `Changes after the cursor [${cursor}] are no longer kept`): AppError {
    const oldest = this.oldestFor(stream);
    return new AppError(410, `${message}: read the list again (the oldest kept cursor is ${oldest}).`, [
      { message: 'The cursor is older than the change history.', meta: { oldest, latest: this.latestOf(stream) ?? null } },
    ]);
  }

  /** The 410 of a cursor older than the database's history too (cluster-replay.ts): what this node can follow from. */
  goneFromDatabase(stream: string, cursor: string): AppError {
    return this.gone(stream, cursor, `Changes after the cursor [${cursor}] are no longer in the database's history (the oplog moved on)`);
  }

  /** Where a client that got a 410 follows from: a `database` stream's from this node's coverage (a cluster cursor), else the per-node oldest. */
  private oldestFor(stream: string): string {
    return this.coverage.get(stream)?.from ?? this.oldestCursor(stream);
  }

  private floorOf(stream: string): number {
    return Math.max(this.globalFloor, this.floor.get(stream) ?? 0);
  }

  /** Changes of `stream` up to `seq` are gone: forget any still kept, and refuse cursors before. */
  private raiseFloor(stream: string, seq: number): void {
    this.floor.set(stream, Math.max(seq, this.floor.get(stream) ?? 0));
    const kept = this.history.get(stream);
    if (!kept) return;
    const n = kept.after(seq) - kept.head;
    if (n > 0) {
      kept.shift(n);
      this.keptCount -= n;
    }
    if (kept.size === 0) this.history.delete(stream);
  }

  /** Note a run of this feed (the newest MAX_RUNS are kept: older cursors are long past the history). */
  private remember(run: string): void {
    // Already the newest (every change line of a run at boot, every publish): nothing moves.
    if (run === this.newestRun) return;
    this.newestRun = run;
    this.runs.delete(run);
    this.runs.add(run);
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.values().next().value!);
  }

  /**
   * The cursor from which every kept change of the stream replays (the one before its
   * oldest; with none kept, the newest position): a client that got a 410 follows from it.
   */
  private oldestCursor(stream: string): string {
    const first = this.history.get(stream)?.first();
    return `${this.run}-${first === undefined ? this.seq : first.seq - 1}`;
  }

  private keep(stream: string, kept: Kept): void {
    let history = this.history.get(stream);
    if (!history) this.history.set(stream, (history = new StreamHistory()));
    history.items.push(kept);
    this.keptCount++;
    const segment = kept.ref.segment;
    const info = (segment.meta as SegmentInfo | undefined) ?? (segment.meta = { streams: new Map<string, number>(), lastAt: 0 } as SegmentInfo);
    info.streams.set(stream, kept.seq);
    info.lastAt = Math.max(info.lastAt, kept.at);
  }

  /** Drop what is over the stream's count or the age (oldest first); memory only, the bytes go with their segment. */
  private trim(stream: string, now: number): void {
    const kept = this.history.get(stream);
    if (!kept) return;
    const oldestAllowed = now - this.limits.maxAgeSeconds * 1000;
    let drop = Math.max(0, kept.size - this.limits.count);
    while (drop < kept.size && kept.items[kept.head + drop]!.at < oldestAllowed) drop++;
    if (drop === 0) return;
    this.raiseFloor(stream, kept.items[kept.head + drop - 1]!.seq);
  }

  /**
   * Retention by bytes (disk), memory (the index) and age together: the oldest segment goes
   * whole, and the streams it held get a floor (written to the log, so a restart knows).
   */
  private enforceBudgets(now: number): void {
    const oldestAllowed = now - this.limits.maxAgeSeconds * 1000;
    for (;;) {
      const oldest = this.log.segments[0];
      if (oldest === undefined) return;
      const info = oldest.meta as SegmentInfo | undefined;
      const over = this.log.totalBytes > this.limits.maxBytes || this.keptCount * KEPT_COST > this.limits.memoryBytes || (info !== undefined && info.lastAt < oldestAllowed);
      if (!over) return;
      if (this.log.segments.length === 1) {
        // Only the active segment: start the next one, so this one can go once written.
        if (oldest.bytes === 0) return;
        this.log.roll();
      }
      if (oldest.unwritten.size > 0) return; // still being written: dropped at a later change
      const segment = this.log.dropOldest();
      if (segment === undefined) return;
      this.forgetSegment(segment);
    }
  }

  private forgetSegment(segment: Segment): void {
    const info = segment.meta as SegmentInfo | undefined;
    if (info === undefined || info.streams.size === 0) return;
    const floors: Array<[string, number]> = [];
    for (const [stream, seq] of info.streams) {
      if (seq > (this.floor.get(stream) ?? 0)) floors.push([stream, seq]);
      this.raiseFloor(stream, seq);
    }
    if (floors.length > 0) this.log.append(JSON.stringify({ floors })).written.catch(() => undefined);
  }
}

const CHANGE_LINE = '{"cursor":"';

/**
 * What a boot keeps of a change line this version wrote (`publish`), read from its head and its
 * tail without parsing the body: `{"cursor":"…","seq":N,"stream":"…",…,"at":N}` or `…,"at":N,"omitted":true}`.
 * `,"at":` is found from the end: every key before it holds JSON (the data as an escaped string,
 * attributes as objects), so the last unescaped `,"at":` is the record's own. Undefined for any
 * other line (segment headers, floors, other writers' shapes, anything escaped where a plain
 * name is expected): those are parsed whole.
 */
export function changeHead(line: string): { cursor: string; seq: number; stream: string; at: number } | undefined {
  if (!line.startsWith(CHANGE_LINE)) return undefined;
  const cursorEnd = line.indexOf('"', CHANGE_LINE.length);
  if (cursorEnd === -1 || !line.startsWith('","seq":', cursorEnd)) return undefined;
  const cursor = line.slice(CHANGE_LINE.length, cursorEnd);
  if (cursor.includes('\\')) return undefined;
  const seqEnd = digitsEnd(line, cursorEnd + 8);
  if (seqEnd === -1 || !line.startsWith(',"stream":"', seqEnd)) return undefined;
  const streamStart = seqEnd + 11;
  const streamEnd = line.indexOf('"', streamStart);
  if (streamEnd === -1 || line.charCodeAt(streamEnd + 1) !== 44 /* , */) return undefined;
  const stream = line.slice(streamStart, streamEnd);
  if (stream.includes('\\')) return undefined;
  const atKey = line.lastIndexOf(',"at":');
  if (atKey <= streamEnd) return undefined;
  const atEnd = digitsEnd(line, atKey + 6);
  if (atEnd === -1) return undefined;
  const rest = line.length - atEnd;
  if (!(rest === 1 ? line.charCodeAt(atEnd) === 125 /* } */ : line.endsWith(',"omitted":true}') && rest === 16)) return undefined;
  return { cursor, seq: Number(line.slice(cursorEnd + 8, seqEnd)), stream, at: Number(line.slice(atKey + 6, atEnd)) };
}

/** Where a run of 1 to 15 decimal digits starting at `from` ends, or -1. */
function digitsEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length && at - from < 16) {
    const c = text.charCodeAt(at);
    if (c < 48 || c > 57) break;
    at++;
  }
  return at === from || at - from > 15 ? -1 : at;
}

/** A change line of the history as the feed hands it out. */
function parseChange(line: string): Change {
  const record = JSON.parse(line) as Change & { data: unknown };
  const change: Change = {
    cursor: record.cursor,
    seq: record.seq,
    stream: record.stream,
    event: record.event,
    id: record.id,
    // Lines of older versions hold the data as JSON text too; anything else is shown as null.
    data: typeof record.data === 'string' ? record.data : 'null',
    match: record.match !== null && typeof record.match === 'object' ? record.match : null,
    at: record.at,
  };
  if (record.omitted === true) change.omitted = true;
  if (record.before !== undefined) change.before = record.before !== null && typeof record.before === 'object' ? record.before : null;
  return change;
}
