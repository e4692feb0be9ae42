import { createReadStream } from 'node:fs';
import { open, readdir, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ensureDirDurable, fsyncDir, type Logger } from '../../kernel/index.js';

/** Where one record lies: its segment, and its line's bytes there (without the newline). */
export interface RecordRef {
  readonly segment: Segment;
  readonly offset: number;
  readonly length: number;
}

/** One file of the log: `<name>-<n>.jsonl`, `n` growing; only the newest is appended to. */
export class Segment {
  /** Bytes in the file, counting appends not yet written (their offsets are handed out already). */
  bytes = 0;
  /** Lines appended but not yet on disk, by offset: a read of one is answered from here. */
  readonly unwritten = new Map<number, string>();
  /** Set by the owner (per-segment bookkeeping: the streams in it, pending deliveries...). */
  meta: unknown;
  private reader: Promise<FileHandle> | undefined;
  dropped = false;

  constructor(
    readonly n: number,
    readonly file: string,
  ) {}

  /** A handle to read from, opened once (a dropped segment's open handle still reads on Linux). */
  handle(): Promise<FileHandle> {
    this.reader ??= open(this.file, 'r');
    return this.reader;
  }

  async closeReader(): Promise<void> {
    const reader = this.reader;
    this.reader = undefined;
    if (reader) await reader.then((h) => h.close()).catch(() => undefined);
  }
}

export interface SegmentLogOptions {
  /** A new segment is started once the active one holds this many bytes. */
  segmentBytes: number;
  /** Lines longer than this are skipped when read at boot (and never written). */
  maxLineBytes: number;
  /** fsync each batch of appends before they resolve (the webhook outbox); else the OS flushes (the history). */
  durable: boolean;
}

/** What `open` hands each line read at boot; `line` is the raw text (parse it yourself). */
export type LineVisitor = (line: string, ref: RecordRef) => void;

/**
 * An append-only log of JSON lines kept in segment files (Kafka's layout, in small): the
 * memory of its owner holds only `RecordRef`s, the bytes stay on disk; retention drops the
 * oldest segment whole (an unlink, never a rewrite of what is kept); boot reads segments
 * as streams of lines, so no file is ever one string in memory. Appends are group-committed:
 * records appended while a write runs go out in the next single write. Each boot appends to
 * a new segment, so a line torn by a crash stays the last of its file and is skipped.
 */
export class SegmentLog {
  private readonly list: Segment[] = [];
  private active: Segment | undefined;
  private writer: FileHandle | undefined;
  /** The segment `writer` appends to. */
  private writerSegment: Segment | undefined;
  private queue: Array<{ text: string; segment: Segment; offset: number; resolve(): void; reject(error: unknown): void }> = [];
  private writing: Promise<void> | undefined;
  private nextN = 1;
  private dirReady = false;
  /** Called when a segment is started, before any record in it: a header line to write first (or none). */
  header: (() => string | undefined) | undefined;

  constructor(
    readonly dir: string,
    readonly name: string,
    private readonly options: SegmentLogOptions,
    private readonly logger: Logger,
  ) {}

  /** Segments, oldest first (the last one may be the active one). */
  get segments(): readonly Segment[] {
    return this.list;
  }

  /** Bytes in every segment. */
  get totalBytes(): number {
    let total = 0;
    for (const segment of this.list) total += segment.bytes;
    return total;
  }

  /**
   * Find the segments of this log (boot), first dropping the oldest while all of them hold
   * more than `maxBytes` (so a log left oversized by a crash or an older version is never
   * read whole), then hand every line of the rest to `visit`, oldest first. Returns how
   * many segments were dropped.
   */
  async open(maxBytes: number, visit: LineVisitor): Promise<number> {
    const pattern = new RegExp(`^${this.name}-(\\d{1,15})\\.jsonl$`);
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const found: Array<{ n: number; file: string; size: number }> = [];
    for (const name of names) {
      const match = pattern.exec(name);
      if (!match) continue;
      const file = path.join(this.dir, name);
      found.push({ n: Number(match[1]), file, size: (await stat(file)).size });
    }
    found.sort((a, b) => a.n - b.n);
    let total = found.reduce((sum, f) => sum + f.size, 0);
    let dropped = 0;
    while (found.length > 0 && total > maxBytes) {
      const oldest = found.shift()!;
      total -= oldest.size;
      await unlink(oldest.file).catch(() => undefined);
      dropped++;
      this.logger.warn({ path: oldest.file, bytes: oldest.size }, 'dropped a log segment over the byte budget at boot');
    }
    for (const f of found) {
      const segment = new Segment(f.n, f.file);
      segment.bytes = f.size;
      this.list.push(segment);
      this.nextN = f.n + 1;
      await readLines(f.file, this.options.maxLineBytes, this.logger, (line, offset, length) => visit(line, { segment, offset, length }));
    }
    return dropped;
  }

  /** Append one record (a line of JSON without its newline); its place is known at once. */
  append(text: string): { ref: RecordRef; written: Promise<void> } {
    let segment = this.active;
    if (segment === undefined || segment.bytes >= this.options.segmentBytes) segment = this.roll();
    const ref = this.push(segment, text);
    const written = new Promise<void>((resolve, reject) => {
      this.queue.push({ text, segment, offset: ref.offset, resolve, reject });
    });
    this.writing ??= this.flush();
    return { ref, written };
  }

  /** The line a ref points at (from memory while its write is pending). */
  async read(ref: RecordRef): Promise<string> {
    const pending = ref.segment.unwritten.get(ref.offset);
    if (pending !== undefined) return pending;
    const handle = await ref.segment.handle();
    const buffer = Buffer.allocUnsafe(ref.length);
    const { bytesRead } = await handle.read(buffer, 0, ref.length, ref.offset);
    if (bytesRead !== ref.length) throw new Error(`${ref.segment.file}: a record ends early (${bytesRead} of ${ref.length} bytes at ${ref.offset})`);
    return buffer.toString('utf8');
  }

  /**
   * Forget the oldest segment and delete its file (in the background: a replay reading it
   * keeps its open handle); never the active one, nor one with appends still to write.
   */
  dropOldest(): Segment | undefined {
    const oldest = this.list[0];
    if (oldest === undefined || oldest === this.active || oldest.unwritten.size > 0) return undefined;
    this.list.shift();
    oldest.dropped = true;
    void unlink(oldest.file)
      .catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.warn({ err: error, path: oldest.file }, 'a dropped log segment could not be deleted');
      })
      .finally(() => oldest.closeReader());
    return oldest;
  }

  /** Start the next segment now (the active one then becomes droppable). */
  roll(): Segment {
    const segment = new Segment(this.nextN++, path.join(this.dir, `${this.name}-${this.nextN - 1}.jsonl`));
    this.list.push(segment);
    this.active = segment;
    const header = this.header?.();
    if (header !== undefined) {
      const ref = this.push(segment, header);
      this.queue.push({ text: header, segment, offset: ref.offset, resolve: () => undefined, reject: () => undefined });
      this.writing ??= this.flush();
    }
    return segment;
  }

  /** Resolves once every append so far is written. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  async close(): Promise<void> {
    await this.idle();
    await this.writer?.close().catch(() => undefined);
    this.writer = undefined;
    for (const segment of this.list) await segment.closeReader();
  }

  private push(segment: Segment, text: string): RecordRef {
    const length = Buffer.byteLength(text);
    const ref = { segment, offset: segment.bytes, length };
    segment.bytes += length + 1;
    segment.unwritten.set(ref.offset, text);
    return ref;
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // One write per segment per batch: the queue is in append order, segments in turn.
        const segment = this.queue[0]!.segment;
        let end = 1;
        while (end < this.queue.length && this.queue[end]!.segment === segment) end++;
        const batch = this.queue.splice(0, end);
        try {
          const handle = await this.writerFor(segment);
          await handle.write(batch.map((q) => `${q.text}\n`).join(''));
          if (this.options.durable) await handle.sync();
          for (const q of batch) {
            segment.unwritten.delete(q.offset);
            q.resolve();
          }
        } catch (error) {
          // What could not be written is lost from the log (its owner is told); later appends
          // go to a new segment, so no offset handed out points into a torn file.
          // Appends queued behind the failed batch in the same segment would land at other
          // offsets than the ones handed out: they fail with it.
          const behind = this.queue.filter((q) => q.segment === segment);
          this.queue = this.queue.filter((q) => q.segment !== segment);
          for (const q of [...batch, ...behind]) {
            segment.unwritten.delete(q.offset);
            q.reject(error);
          }
          if (segment === this.active) this.active = undefined;
          await this.writer?.close().catch(() => undefined);
          this.writer = undefined;
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async writerFor(segment: Segment): Promise<FileHandle> {
    if (this.writer !== undefined && this.writerSegment === segment) return this.writer;
    await this.writer?.close().catch(() => undefined);
    this.writer = undefined;
    if (!this.dirReady) {
      await ensureDirDurable(this.dir);
      this.dirReady = true;
    }
    const handle = await open(segment.file, 'a', 0o644);
    // A new file's own entry in its folder must be durable too.
    if (this.options.durable) await fsyncDir(this.dir);
    this.writer = handle;
    this.writerSegment = segment;
    return handle;
  }
}

/**
 * Read a file of lines as a stream: `visit` gets each complete line with its byte offset
 * and length (awaited when it returns a promise). A line over `maxLineBytes` is skipped without being held in memory, and a
 * last line without its newline (an append cut by a crash) is dropped; each is logged once.
 */
export async function readLines(
  file: string,
  maxLineBytes: number,
  logger: Logger,
  visit: (line: string, offset: number, length: number) => void | Promise<void>,
  start = 0,
): Promise<void> {
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let lineStart = start;
  let position = start;
  let skipping = false;
  let oversized = 0;
  const stream = createReadStream(file, { start, highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let from = 0;
      for (;;) {
        const newline = chunk.indexOf(10, from);
        if (newline === -1) {
          const rest = chunk.length - from;
          if (!skipping && carryBytes + rest > maxLineBytes) {
            skipping = true;
            carry = [];
            carryBytes = 0;
          }
          if (!skipping && rest > 0) {
            carry.push(chunk.subarray(from));
            carryBytes += rest;
          }
          break;
        }
        const length = position + newline - lineStart;
        if (skipping || length > maxLineBytes) {
          oversized++;
        } else if (length > 0) {
          const bytes = carryBytes === 0 ? chunk.subarray(from, newline) : Buffer.concat([...carry, chunk.subarray(from, newline)]);
          const waiting = visit(bytes.toString('utf8'), lineStart, length);
          if (waiting !== undefined) await waiting;
        }
        carry = [];
        carryBytes = 0;
        skipping = false;
        from = newline + 1;
        lineStart = position + from;
      }
      position += chunk.length;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (oversized > 0) logger.warn({ path: file, lines: oversized, max_line_bytes: maxLineBytes }, 'skipped lines longer than the limit');
  if (skipping || carryBytes > 0) logger.warn({ path: file, bytes: position - lineStart }, 'dropped a torn last line (an append cut by a crash)');
}
