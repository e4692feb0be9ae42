import path from 'node:path';
import { ensureDirDurable, removeFileUnsynced, SpareFiles, storageHealthOf, type FileStamp, type Logger } from '../../kernel/index.js';
import { recoverJournals, WriteJournal, type JournalGeneration, type JournalRecord } from './write-journal.js';

interface Pending {
  name: string;
  /** null: remove the file. */
  data: string | null;
  /** A file is expected at the name (false: a create; see SpareFiles.replace). */
  existing: boolean;
  /** The written file's stamp (undefined for a removal). */
  resolve(stamp: FileStamp | undefined): void;
  reject(error: unknown): void;
}

/**
 * Group commit for one folder of entry files: writes and removals requested in the same turn
 * of the event loop are appended to the folder's write journal and flushed with one fdatasync
 * (write-journal.ts); then each file is replaced atomically (temp file, rename) or removed,
 * and each caller is acknowledged. Each file is still all-or-nothing on its own; a failure
 * rejects only the writes it hit (every write of the batch when the journal cannot be
 * written, since none is then durable). `check`, when given, runs once per batch before any
 * file is touched (the folder may be written at all): a throw rejects the whole batch.
 */
export class DirectoryWriter {
  private pending: Pending[] = [];
  private scheduled = false;
  private ensured = false;
  /** `dir` and a separator: names are single path segments, so no path.join per file. */
  private readonly prefix: string;
  private readonly journal: WriteJournal;
  /** Replaced files' inodes, reused by the next writes (kernel/tools/spare-files.ts). */
  private readonly spares: SpareFiles;

  constructor(
    readonly dir: string,
    private readonly logger: Logger,
    private readonly check?: () => void,
  ) {
    this.prefix = path.resolve(dir) + path.sep;
    this.journal = new WriteJournal(dir, logger);
    this.spares = new SpareFiles(dir, logger);
  }

  /** Before the folder is read: put back what a crash left only in these journal files (found by the caller's listing). */
  recover(journals: readonly string[]): Promise<void> {
    return recoverJournals(this.dir, journals, this.logger);
  }

  /**
   * Durable once this resolves; with the new file's stamp (to tell it from a later edit on disk
   * without reading it). `existing` false: a create, no file expected at the name (a hint).
   */
  write(name: string, data: string, existing = true): Promise<FileStamp> {
    return this.enqueue(name, data, existing) as Promise<FileStamp>;
  }

  async remove(name: string): Promise<void> {
    await this.enqueue(name, null, true);
  }

  /** Before the folder is read: what an earlier run left in its spare files goes (old versions of entries among them). */
  clearSpares(): void {
    this.spares.clear();
  }

  /** After the last write: the journal is checkpointed and removed, and the spare files. */
  async close(): Promise<void> {
    await this.journal.close();
    this.spares.clear();
  }

  private enqueue(name: string, data: string | null, existing: boolean): Promise<FileStamp | undefined> {
    return new Promise<FileStamp | undefined>((resolve, reject) => {
      this.pending.push({ name, data, existing, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const health = storageHealthOf(this.prefix);
    const records: JournalRecord[] = new Array(batch.length);
    let generation: JournalGeneration;
    try {
      this.check?.();
      if (!this.ensured) {
        await ensureDirDurable(this.dir);
        this.ensured = true;
      }
      for (let i = 0; i < batch.length; i++) {
        const { name, data } = batch[i]!;
        records[i] = { name, bytes: data === null ? null : Buffer.from(data) };
      }
      health.checkInjected();
      generation = await this.journal.append(records);
    } catch (error) {
      const failure = health.error(error);
      for (const p of batch) p.reject(failure);
      return;
    }
    // Durable from here: each file is replaced (a spare file written, then renamed over it) or
    // removed, on this thread, with no flush of its own (see replaceFileUnsynced, SpareFiles).
    const stamps: Array<FileStamp | undefined> = new Array(batch.length);
    const failures = new Map<Pending, unknown>();
    const done: Array<[string, FileStamp | undefined]> = [];
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      const bytes = records[i]!.bytes;
      try {
        if (bytes === null) removeFileUnsynced(this.prefix + p.name);
        else stamps[i] = this.spares.replace(this.prefix + p.name, bytes, p.existing);
        done.push([p.name, stamps[i]]);
      } catch (error) {
        failures.set(p, health.error(error));
      }
    }
    try {
      this.journal.applied(generation, done);
      if (failures.size > 0) {
        const names = [...failures.keys()].map((p) => p.name);
        await this.journal.cancel(generation, names).catch((error: unknown) => this.logger.error({ err: error, path: this.dir }, 'failed writes could not be cancelled in the write journal: a replay after a crash may still apply them'));
      }
    } finally {
      generation.release();
    }
    if (done.length > 0) health.written();
    batch.forEach((p, i) => (failures.has(p) ? p.reject(failures.get(p)) : p.resolve(stamps[i])));
  }
}
