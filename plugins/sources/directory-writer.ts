import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { ensureDirDurable, fsyncDir, writeFileAtomic, type FileStamp } from '../../kernel/index.js';

interface Pending {
  name: string;
  /** null: remove the file. */
  data: string | null;
  /** The written file's stamp (undefined for a removal). */
  resolve(stamp: FileStamp | undefined): void;
  reject(error: unknown): void;
}

async function removeOne(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/**
 * Group commit for one folder of entry files: writes and removals requested in the
 * same turn of the event loop are each done atomically (temp file, fsync, rename) and
 * then share one fsync of the folder, after which each caller is acknowledged. Each
 * file is still all-or-nothing on its own; a failure rejects only the writes it hit
 * (and every write of the batch when the folder fsync fails, since none is then
 * known durable). `check`, when given, runs once per batch before any file is touched
 * (the folder may be written at all): a throw rejects the whole batch.
 */
export class DirectoryWriter {
  private pending: Pending[] = [];
  private scheduled = false;
  private ensured = false;
  /** `dir` and a separator: names are single path segments, so no path.join per file. */
  private readonly prefix: string;

  constructor(
    readonly dir: string,
    private readonly check?: () => void,
  ) {
    this.prefix = path.resolve(dir) + path.sep;
  }

  /** Durable once this resolves; with the new file's stamp (to tell it from a later edit on disk without reading it). */
  write(name: string, data: string): Promise<FileStamp> {
    return this.enqueue(name, data) as Promise<FileStamp>;
  }

  async remove(name: string): Promise<void> {
    await this.enqueue(name, null);
  }

  private enqueue(name: string, data: string | null): Promise<FileStamp | undefined> {
    return new Promise<FileStamp | undefined>((resolve, reject) => {
      this.pending.push({ name, data, resolve, reject });
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
    try {
      this.check?.();
      if (!this.ensured) {
        await ensureDirDurable(this.dir);
        this.ensured = true;
      }
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    const stamps: Array<FileStamp | undefined> = new Array(batch.length);
    const results = await Promise.allSettled(
      batch.map((p, i) => (p.data === null ? removeOne(this.prefix + p.name) : writeFileAtomic(this.prefix + p.name, p.data, { written: (stamp) => (stamps[i] = stamp) }))),
    );
    let dirError: unknown;
    try {
      await fsyncDir(this.dir);
    } catch (error) {
      dirError = error;
    }
    results.forEach((result, i) => {
      const p = batch[i]!;
      if (result.status === 'rejected') p.reject(result.reason);
      else if (dirError) p.reject(dirError);
      else p.resolve(stamps[i]);
    });
  }
}
