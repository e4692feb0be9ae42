import { AppError, readTextFile, writeFileDurable, type Logger } from '../../kernel/index.js';
import type { StreamDefinition } from '../streams/index.js';
import type { Entry } from './contracts.js';
import { keyId } from './criteria/values.js';
import { MemorySource } from './memory-source.js';

type Change = { kind: 'put'; id: string; entry: Entry } | { kind: 'delete'; id: string } | { kind: 'truncate' };

interface Queued {
  change: Change;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Base of the sources that keep a whole stream in one file (`file`, `self`). Writes
 * are serialized per file and group-committed: every change queued while a flush is
 * running is written by the next flush, one durable rewrite of the file for the batch,
 * and each caller is acknowledged only after that rewrite is on disk.
 */
export abstract class SingleFileSource extends MemorySource {
  /** The entries as last written to disk, in file order. */
  private disk = new Map<string, Entry>();
  private queue: Queued[] = [];
  private flushing = false;

  constructor(
    definition: StreamDefinition,
    logger: Logger,
    readonly file: string,
  ) {
    super(definition, logger);
  }

  protected override originOf(): string {
    return this.file;
  }

  /** Parse the file's text into entries (each with its key field set). */
  protected abstract decode(text: string | undefined): Entry[] | Promise<Entry[]>;
  /** The whole new file text for these entries, in file order. */
  protected abstract encode(entries: Entry[]): string | Promise<string>;

  protected async readText(): Promise<string | undefined> {
    try {
      return await readTextFile(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  protected async writeText(text: string): Promise<void> {
    await writeFileDurable(this.file, text);
  }

  protected async loadAll(): Promise<Entry[]> {
    let entries: Entry[];
    try {
      entries = await this.decode(await this.readText());
    } catch (error) {
      // One corrupt file holds every entry: refuse to serve (and to overwrite it) rather than lose data.
      this.logger.error({ path: this.file, err: error }, 'cannot read the source file');
      throw new AppError(500, `The source file of stream [${this.definition.id}] cannot be read.`);
    }
    this.disk = new Map();
    for (const entry of entries) {
      const id = keyId(entry[this.keyName]);
      if (!this.disk.has(id)) this.disk.set(id, entry);
    }
    return [...this.disk.values()];
  }

  protected persistPut(id: string, entry: Entry): Promise<void> {
    return this.enqueue({ kind: 'put', id, entry });
  }

  protected persistDelete(id: string): Promise<void> {
    return this.enqueue({ kind: 'delete', id });
  }

  protected persistTruncate(): Promise<void> {
    return this.enqueue({ kind: 'truncate' });
  }

  private enqueue(change: Change): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ change, resolve, reject });
      if (!this.flushing) void this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        const next = new Map(this.disk);
        for (const { change } of batch) {
          if (change.kind === 'put') next.set(change.id, change.entry);
          else if (change.kind === 'delete') next.delete(change.id);
          else next.clear();
        }
        try {
          await this.writeText(await this.encode([...next.values()]));
          this.disk = next;
          for (const q of batch) q.resolve();
        } catch (error) {
          for (const q of batch) q.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
