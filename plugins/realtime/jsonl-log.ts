import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureDirDurable, fsyncDir, writeFileDurable, type Logger } from '../../kernel/index.js';

/**
 * An append-only file of JSON lines, the storage of the change history and of the webhook
 * outbox. Appends are group-committed: records appended while a write runs go out in the
 * next single write. `durable` logs fsync each batch before the append resolves (the outbox:
 * a delivery is on disk before the write that caused it is acknowledged); the others leave
 * it to the OS (the history: it survives a crash of the process, not of the machine).
 * `rewrite` replaces the whole file atomically (compaction).
 */
export class JsonlLog<T> {
  private queue: Array<{ line: string; resolve(): void; reject(error: unknown): void }> = [];
  private writing: Promise<void> | undefined;
  private created = false;

  constructor(
    readonly file: string,
    private readonly durable: boolean,
    private readonly logger: Logger,
  ) {}

  /** Every record; a torn last line (a crash mid-append) and lines that do not parse are skipped. */
  async read(): Promise<T[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const out: T[] = [];
    let skipped = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        out.push(JSON.parse(line) as T);
      } catch {
        skipped++;
      }
    }
    if (skipped > 0) this.logger.warn({ path: this.file, skipped }, 'skipped unreadable lines (an append cut by a crash)');
    return out;
  }

  append(record: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ line: `${JSON.stringify(record)}\n`, resolve, reject });
      this.writing ??= this.flush();
    });
  }

  /**
   * Replace the file with the records `snapshot` returns, taken once every earlier append is
   * written; appends made meanwhile wait and go into the new file.
   */
  async rewrite(snapshot: () => T[]): Promise<void> {
    await this.idle();
    const done = (async () => {
      await writeFileDurable(this.file, snapshot().map((r) => `${JSON.stringify(r)}\n`).join(''));
    })();
    this.writing = done.then(
      () => this.flush(),
      () => this.flush(),
    );
    await done;
  }

  /** Resolves once every append so far is written. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async flush(): Promise<void> {
    if (this.queue.length === 0) {
      this.writing = undefined;
      return;
    }
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          if (!this.created) {
            await ensureDirDurable(path.dirname(this.file));
            this.created = true;
          }
          const handle = await open(this.file, 'a');
          let fresh = false;
          try {
            fresh = (await handle.stat()).size === 0;
            await handle.writeFile(batch.map((q) => q.line).join(''));
            if (this.durable) await handle.sync();
          } finally {
            await handle.close();
          }
          // A new file's own entry in its folder must be durable too.
          if (this.durable && fresh) await fsyncDir(path.dirname(this.file));
          for (const q of batch) q.resolve();
        } catch (error) {
          for (const q of batch) q.reject(error);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }
}
