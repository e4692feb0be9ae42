import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { flushDescriptor, flushFile, fsyncDir, replaceFileUnsynced, sameStamp, stampOfStats, writeAllSync, type FileStamp, type Logger } from '../../kernel/index.js';
import { mapLimit } from './map-limit.js';

/**
 * The write journal of one folder of entry files (issue #33, group commit). A batch of writes
 * is appended to the journal and flushed with ONE fdatasync; only then are the entry files
 * replaced (temp file and rename, no flush of their own) and the writes acknowledged. A crash
 * before the OS wrote those files back is repaired from the journal at the next load
 * (`recoverJournals`). Flushing each file and the folder per batch, as before, cost a flush per
 * write: the journal is what lets concurrent writes share one, as a database's WAL does.
 *
 * The journal is checkpointed (every file it names flushed, the folder flushed, the journal
 * removed) once it holds CHECKPOINT_BYTES or is CHECKPOINT_AGE_MS old, and when the store closes:
 * a clean stop leaves no journal behind.
 *
 * On disk: `.streams-journal.<ms>.<seq>.<writer>`, hidden (never an entry, never a temp file).
 * Records, each one line of header, then the bytes for a write:
 *   `W <crc32 of name and bytes> <name as JSON> <byte length>\n<bytes>\n`  a write
 *   `R <crc32 of name> <name as JSON>\n`                                  a removal
 *   `A [name, ino, size, mtimeMs]\n` / `A [name]\n`   the write / removal is done on disk (not flushed)
 *   `C <name as JSON>\n`                              the name's last write failed: never replay it (its earlier one is)
 * A torn or damaged record ends the journal's replay (it was never acknowledged).
 */

const PREFIX = '.streams-journal.';
/** A journal this long is checkpointed (bounds the replay after a crash: reads and flushes). */
const CHECKPOINT_BYTES = 8 * 1024 * 1024;
/** Or this old: by then the OS has written most of its files back, so their flushes are cheap. */
const CHECKPOINT_AGE_MS = 60_000;
/** Files flushed at once by a checkpoint or a replay. */
const FLUSH_CONCURRENCY = 8;

/** Journal files owned by a writer open in this process: a load in this process never replays them. */
const live = new Set<string>();

export function isJournalFile(name: string): boolean {
  return name.startsWith(PREFIX);
}

/** One journal file: the writes appended to it, and the batches not yet applied to their files. */
export class JournalGeneration {
  readonly names = new Set<string>();
  bytes = 0;
  /** Batches appended and not yet released (their files not yet in place). */
  busy = 0;
  private released: (() => void) | undefined;
  readonly started = Date.now();

  constructor(
    readonly file: string,
    readonly fd: number,
  ) {}

  /** Resolves once every batch appended to this generation was released. */
  idle(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise((resolve) => (this.released = resolve));
  }

  release(): void {
    if (--this.busy === 0) this.released?.();
  }
}

export interface JournalRecord {
  name: string;
  /** null: a removal. */
  bytes: Buffer | null;
}

const WRITER_ID = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
let sequence = 0;


export class WriteJournal {
  private current: JournalGeneration | undefined;
  private opening: Promise<JournalGeneration> | undefined;
  /** Checkpoints started and not finished (a close waits for them). */
  private readonly checkpoints = new Set<Promise<void>>();

  private readonly checkpointBytes: number;

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    options: { checkpointBytes?: number } = {},
  ) {
    this.checkpointBytes = options.checkpointBytes ?? CHECKPOINT_BYTES;
  }

  /**
   * Append the batch and flush it: the writes are durable once this resolves, before their files
   * are touched. Release the generation returned once the batch's files are in place.
   */
  async append(records: readonly JournalRecord[]): Promise<JournalGeneration> {
    const generation = this.current ?? (await this.opened());
    const parts: Buffer[] = [];
    for (const { name, bytes } of records) {
      const quoted = JSON.stringify(name);
      if (bytes === null) {
        parts.push(Buffer.from(`R ${crc32(name)} ${quoted}\n`));
      } else {
        parts.push(Buffer.from(`W ${crc32(bytes, crc32(name))} ${quoted} ${bytes.byteLength}\n`), bytes, NEWLINE);
      }
      generation.names.add(name);
    }
    const chunk = Buffer.concat(parts);
    generation.busy++;
    try {
      writeAllSync(generation.fd, chunk);
      generation.bytes += chunk.byteLength;
      await flushDescriptor(generation.fd);
    } catch (error) {
      generation.release();
      // What follows a record half written (or a failed flush) would never be replayed: later
      // batches go to a new journal, and this one is checkpointed away.
      if (generation === this.current) this.rotate();
      throw error;
    }
    if (generation === this.current && (generation.bytes >= this.checkpointBytes || Date.now() - generation.started >= CHECKPOINT_AGE_MS)) this.rotate();
    return generation;
  }

  /**
   * What the batch's files are now (not flushed: a replay tells an edit made on disk after the
   * write from a write the crash lost by them). Best effort: without them a replay rewrites.
   */
  applied(generation: JournalGeneration, done: ReadonlyArray<[name: string, stamp: FileStamp | undefined]>): void {
    if (done.length === 0) return;
    let text = '';
    for (const [name, stamp] of done) text += `A ${JSON.stringify(stamp === undefined ? [name] : [name, stamp.ino, stamp.size, stamp.mtimeMs])}\n`;
    try {
      writeAllSync(generation.fd, Buffer.from(text));
    } catch (error) {
      this.logger.warn({ err: error, path: this.dir }, 'the write journal could not note the files written (a replay after a crash rewrites them)');
    }
  }

  /** Writes journaled but not done (their file could not be written): never replayed, flushed before the caller reports the failure. */
  async cancel(generation: JournalGeneration, names: readonly string[]): Promise<void> {
    writeAllSync(generation.fd, Buffer.from(names.map((name) => `C ${JSON.stringify(name)}\n`).join('')));
    await flushDescriptor(generation.fd);
  }

  /** Checkpoint everything journaled: a clean stop leaves no journal behind. */
  async close(): Promise<void> {
    if (this.opening !== undefined) await this.opening.catch(() => undefined);
    this.rotate();
    while (this.checkpoints.size > 0) await Promise.all(this.checkpoints);
  }

  /** The generation batches go to, opened by the first batch that needs one (one open for concurrent batches). */
  private opened(): Promise<JournalGeneration> {
    // Forgotten once settled, from outside the open: one that failed (even before its first
    // await) must not be handed to every later batch.
    this.opening ??= this.open().finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async open(): Promise<JournalGeneration> {
    const file = path.join(this.dir, `${PREFIX}${Date.now()}.${++sequence}.${WRITER_ID}`);
    const fd = openSync(file, 'a', 0o644);
    live.add(file);
    const generation = new JournalGeneration(file, fd);
    try {
      // The journal's own name must survive a crash before anything in it counts.
      await fsyncDir(this.dir);
    } catch (error) {
      this.retire(generation);
      await unlink(file).catch(() => undefined); // nothing was journaled in it
      throw error;
    }
    this.current = generation;
    return generation;
  }

  /** The current generation is closed to new batches and checkpointed once its batches are done. */
  private rotate(): void {
    const generation = this.current;
    if (generation === undefined) return;
    this.current = undefined;
    const done = this.checkpoint(generation)
      .catch((error: unknown) => this.logger.error({ err: error, path: generation.file }, 'the write journal could not be checkpointed: it is replayed at the next load'))
      .finally(() => this.checkpoints.delete(done));
    this.checkpoints.add(done);
  }

  private async checkpoint(generation: JournalGeneration): Promise<void> {
    await generation.idle();
    try {
      await mapLimit([...generation.names], FLUSH_CONCURRENCY, (name) => flushFile(path.join(this.dir, name)));
      await fsyncDir(this.dir);
      // Its `A` notes flushed too: were the removal lost in a crash, a replay keeps any file edited on disk since.
      await flushDescriptor(generation.fd);
      unlinkSync(generation.file);
    } finally {
      this.retire(generation);
    }
  }

  private retire(generation: JournalGeneration): void {
    closeSync(generation.fd);
    live.delete(generation.file);
  }
}

const NEWLINE = Buffer.from('\n');

/** What a replay knows of one name: its last write (null: a removal), and whether it was done. */
export interface ReplayedWrite {
  bytes: Buffer | null;
  /** The file the write made (undefined: not known to be done; 'removed': the removal was done). */
  done: FileStamp | 'removed' | undefined;
  /** The name's write journaled before this one: what a cancel of this one falls back to. */
  previous: ReplayedWrite | undefined;
}

/** Parse one journal into `into` (later records win), up to its first torn or damaged record. */
export function parseJournal(data: Buffer, into: Map<string, ReplayedWrite>): { complete: boolean } {
  let at = 0;
  while (at < data.byteLength) {
    const end = data.indexOf(10, at);
    if (end < 0) return { complete: false };
    const header = data.toString('utf8', at, end);
    at = end + 1;
    const kind = header.charCodeAt(0);
    try {
      if (kind === 87 /* W */) {
        const crcEnd = header.indexOf(' ', 2);
        const lengthAt = header.lastIndexOf(' ');
        const name = JSON.parse(header.slice(crcEnd + 1, lengthAt)) as unknown;
        const length = Number(header.slice(lengthAt + 1));
        if (typeof name !== 'string' || !Number.isSafeInteger(length) || length < 0 || at + length >= data.byteLength || data[at + length] !== 10) return { complete: false };
        const bytes = data.subarray(at, at + length);
        if (crc32(bytes, crc32(name)) !== Number(header.slice(2, crcEnd))) return { complete: false };
        into.set(name, { bytes: Buffer.from(bytes), done: undefined, previous: into.get(name) });
        at += length + 1;
      } else if (kind === 82 /* R */) {
        const crcEnd = header.indexOf(' ', 2);
        const name = JSON.parse(header.slice(crcEnd + 1)) as unknown;
        if (typeof name !== 'string' || crc32(name) !== Number(header.slice(2, crcEnd))) return { complete: false };
        into.set(name, { bytes: null, done: undefined, previous: into.get(name) });
      } else if (kind === 65 /* A */) {
        const note = JSON.parse(header.slice(2)) as unknown[];
        const last = into.get(note[0] as string);
        if (last === undefined) continue;
        last.done = note.length === 1 ? 'removed' : { ino: note[1] as number, size: note[2] as number, mtimeMs: note[3] as number };
      } else if (kind === 67 /* C */) {
        // The name's last write failed: an earlier acknowledged write of it (whose rename may
        // not have reached the disk either) is still the one to replay.
        const name = JSON.parse(header.slice(2)) as string;
        const previous = into.get(name)?.previous;
        if (previous === undefined) into.delete(name);
        else into.set(name, previous);
      } else {
        return { complete: false };
      }
    } catch {
      return { complete: false };
    }
  }
  return { complete: true };
}

/** Those of `names` that are journal files left by a writer not open in this process, oldest first. */
function leftJournals(dir: string, names: readonly string[]): string[] {
  const order = (name: string): [number, number] => {
    const [ms, seq] = name.slice(PREFIX.length).split('.');
    return [Number(ms), Number(seq)];
  };
  return names
    .filter((name) => isJournalFile(name) && !live.has(path.join(dir, name)))
    .sort((a, b) => {
      const [am, as] = order(a);
      const [bm, bs] = order(b);
      return am - bm || as - bs;
    });
}

/**
 * After an unclean stop (a journal is left), make the folder hold every acknowledged write:
 * each name's last journaled write is put back unless its file already holds it, or the file
 * changed on disk after the write was done (a hand edit: kept, and logged). Then every file the
 * journal names is flushed and the journal removed. Runs before the folder is loaded; `found`
 * are the folder's names the load's listing took for journal files.
 */
export async function recoverJournals(dir: string, found: readonly string[], logger: Logger): Promise<void> {
  const journals = leftJournals(dir, found);
  if (journals.length === 0) return;
  const writes = new Map<string, ReplayedWrite>();
  for (const name of journals) {
    const { complete } = parseJournal(readFileSync(path.join(dir, name)), writes);
    if (!complete) logger.warn({ path: path.join(dir, name) }, 'the write journal ends in a torn record (a write never acknowledged): replayed up to it');
  }
  // Names come from this store's own records (checksummed); still, never a path out of the folder.
  for (const name of writes.keys()) if (name === '' || name.startsWith('.') || name.includes('/') || name.includes('\\')) writes.delete(name);
  let restored = 0;
  const kept: string[] = [];
  for (const [name, write] of writes) {
    const file = path.join(dir, name);
    const now = lstatSync(file, { throwIfNoEntry: false });
    if (now !== undefined && !now.isFile()) {
      kept.push(name);
      continue;
    }
    if (write.bytes === null) {
      if (now === undefined) continue;
      if (write.done === undefined) {
        unlinkSync(file);
        restored++;
      } else {
        kept.push(name); // removed, then written again on disk
      }
      continue;
    }
    if (now !== undefined && now.size === write.bytes.byteLength && readFileSync(file).equals(write.bytes)) continue;
    if (now === undefined || write.done === undefined || (write.done !== 'removed' && sameStamp(write.done, stampOfStats(now)))) {
      replaceFileUnsynced(file, write.bytes);
      restored++;
    } else {
      kept.push(name);
    }
  }
  await mapLimit([...writes.keys()], FLUSH_CONCURRENCY, (name) => flushFile(path.join(dir, name)));
  await fsyncDir(dir);
  for (const name of journals) unlinkSync(path.join(dir, name));
  await fsyncDir(dir);
  logger.info({ path: dir, writes: writes.size, restored }, 'write journal replayed after an unclean stop');
  if (kept.length > 0) logger.warn({ path: dir, files: kept.slice(0, 20), count: kept.length }, 'entry files changed on disk after the server wrote them: kept as they are, the journal\'s versions dropped');
}
