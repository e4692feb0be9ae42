import { hash } from 'node:crypto';
import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError, backoffDelay, readTextFile, writeFileDurable, type FolderListener, type Logger, type ReplaceOptions } from '../../kernel/index.js';
import type { StreamDefinition } from '../streams/index.js';
import type { Entry, ExternalChange } from './contracts.js';
import { keyId } from './criteria/values.js';
import type { EntryStore, StoreHost } from './memory/entry-store.js';

type Change = { kind: 'put'; id: string; entry: Entry } | { kind: 'delete'; id: string } | { kind: 'truncate' };

/** What the file looked like when this server last read or wrote it. */
interface Fingerprint {
  /**
   * A replace by rename (how editors and this server save) makes a new inode: compared too, an
   * edit saved that way is told apart even with the same size and mtime (a new file's mtime is
   * the kernel's coarse clock, so a quick editor can match both; `cp -p`, `rsync -t` set it).
   */
  ino: number;
  size: number;
  mtimeMs: number;
  /** Hash of the text; undefined when not known (then a stat change forces a compare of entries). */
  hash?: string;
}

interface Queued {
  change: Change;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The store of the sources that keep a whole stream in one file (`file`, `self`, an addon's
 * format): a subclass says how the file's text becomes entries and back (`decode`, `encode`).
 * Writes are serialized per file and group-committed: every change queued while a flush is
 * running is written by the next flush, one durable rewrite of the file for the batch, and
 * each caller is acknowledged only after that rewrite is on disk. An edit made to the file
 * outside this server is caught up with before each flush, on a refresh and on a watch
 * event, and reported through the host.
 */
export abstract class SingleFileStore implements EntryStore {
  abstract readonly type: string;
  readonly persistent = true;
  protected readonly definition: StreamDefinition;
  protected readonly keyName: string;
  protected readonly logger: Logger;
  /** The entries as last written to disk, in file order. */
  private disk = new Map<string, Entry>();
  private queue: Queued[] = [];
  private flushing = false;
  private seen: Fingerprint | undefined;
  /** Serializes catching up with the disk and flushing (one file, one owner at a time). */
  private diskChain: Promise<unknown> = Promise.resolve();

  constructor(
    protected readonly host: StoreHost,
    readonly file: string,
  ) {
    this.definition = host.definition;
    this.keyName = host.keyName;
    this.logger = host.logger;
  }

  originOf(): string {
    return this.file;
  }

  /** Live sync: the file's folder (an editor replaces the file by a rename, which a watch of the file itself would lose). */
  watchedFolders(): Array<[string, FolderListener]> {
    if (!this.file) return [];
    const name = path.basename(this.file);
    return [[path.dirname(this.file), (changed) => {
      if (changed === undefined || changed === name) void this.refresh().catch(() => undefined);
    }]];
  }

  /** Parse the file's text into entries (each with its key field set). */
  protected abstract decode(text: string | undefined): Entry[] | Promise<Entry[]>;
  /** The whole new file text for these entries, in file order. */
  protected abstract encode(entries: Entry[]): string | Promise<string>;

  protected async readText(): Promise<string | undefined> {
    // A link out of the application's roots is never read nor written through (issue #27).
    const outside = await this.host.files.roots?.checkAsync(this.file);
    if (outside !== undefined) throw new Error(`the file is not read: ${outside}`);
    try {
      return await readTextFile(this.file, this.host.files.maxBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /** Write the whole file; false when `options.unchanged` said the file was edited meanwhile (nothing written). */
  protected async writeText(text: string, options?: ReplaceOptions): Promise<boolean> {
    return writeFileDurable(this.file, text, options);
  }

  /** The file's text for catching up with disk edits (`self` reads its definition file here). */
  protected readCurrent(): Promise<string | undefined> {
    return this.readText();
  }

  private async fingerprint(text?: string): Promise<Fingerprint | undefined> {
    if (!this.file) return undefined;
    try {
      const st = await stat(this.file);
      return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, hash: text === undefined ? undefined : hashOf(text) };
    } catch {
      return undefined;
    }
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.diskChain.then(task, task);
    this.diskChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Catch up with an edit made to the file outside this server: size and mtime first (a
   * stat), then the content hash, then entry by entry. Changed entries replace the ones
   * in memory; the server's own writes are recognized by their fingerprint. An edit that
   * cannot be parsed keeps the last good version (logged once) and blocks writes (409)
   * until fixed, so the broken edit is never overwritten blind.
   */
  async refresh(): Promise<void> {
    await this.host.open();
    await this.exclusive(() => this.catchUp());
  }

  /** Apply the changes found on disk since the last read or write, and announce them. */
  protected async catchUp(): Promise<void> {
    if (!this.file) return;
    const now = await this.fingerprint();
    const seen = this.seen;
    if (seen && now && sameFile(seen, now)) return;
    if (!seen && !now) return;
    let text: string | undefined;
    try {
      text = await this.readCurrent();
    } catch (error) {
      // Undecodable bytes, too large, a link out of the root: kept as they are, writes refused.
      this.host.unreadable.mark(this.file, `the file cannot be read (${(error as Error).message})`, error);
      throw new AppError(409, `The source file of stream [${this.definition.id}] cannot be read (${(error as Error).message}); fix it before writing.`);
    }
    const textHash = text === undefined ? undefined : hashOf(text);
    if (seen?.hash !== undefined && textHash === seen.hash) {
      this.seen = now && { ...now, hash: textHash };
      return;
    }
    let entries: Entry[];
    try {
      entries = await this.decode(text);
    } catch (error) {
      this.host.unreadable.mark(this.file, `the file was edited on disk and cannot be read (${(error as Error).message})`, error);
      throw new AppError(409, `The source file of stream [${this.definition.id}] was edited on disk and cannot be read; fix it before writing.`);
    }
    this.host.unreadable.mark(this.file, undefined);
    const next = new Map<string, Entry>();
    for (const entry of entries) {
      const id = keyId(entry[this.keyName]);
      if (!next.has(id)) next.set(id, entry);
    }
    const changed: Array<[string, Entry | undefined]> = [];
    for (const [id, entry] of next) {
      const previous = this.disk.get(id);
      if (!previous || JSON.stringify(previous) !== JSON.stringify(entry)) changed.push([id, entry]);
    }
    for (const id of this.disk.keys()) if (!next.has(id)) changed.push([id, undefined]);
    this.disk = next;
    const changes: ExternalChange[] = [];
    for (const [id, entry] of changed) {
      const change = this.host.replace(id, entry);
      if (change) changes.push(change);
    }
    this.seen = now && { ...now, hash: textHash };
    this.host.announce(changes);
  }

  async load(): Promise<Entry[]> {
    let entries: Entry[];
    try {
      entries = await this.decode(await this.readText());
    } catch (error) {
      // One corrupt file holds every entry: refuse to serve (and to overwrite it) rather than
      // lose data. A 409 like every degraded file (issue #27), listed in /readyz.
      this.host.unreadable.mark(this.file, `the file cannot be read (${(error as Error).message})`, error);
      throw new AppError(409, `The source file of stream [${this.definition.id}] cannot be read; fix it before reading or writing.`);
    }
    this.disk = new Map();
    for (const entry of entries) {
      const id = keyId(entry[this.keyName]);
      if (!this.disk.has(id)) this.disk.set(id, entry);
    }
    // Reading records the file's size and mtime, so a later edit on disk is noticed.
    this.seen = this.loadReadsFile() ? await this.fingerprint() : undefined;
    return [...this.disk.values()];
  }

  /**
   * Whether `load` read the file just now. `self` decodes what the registry parsed at
   * boot, maybe long before: its first catch-up then compares the file entry by entry.
   */
  protected loadReadsFile(): boolean {
    return true;
  }

  /** Whether `writeText` writes exactly the encoded text (so its hash fingerprints the file). */
  protected writesWholeText(): boolean {
    return true;
  }

  put(id: string, entry: Entry): Promise<void> {
    return this.enqueue({ kind: 'put', id, entry });
  }

  delete(id: string): Promise<void> {
    return this.enqueue({ kind: 'delete', id });
  }

  truncate(): Promise<void> {
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
        try {
          await this.exclusive(async () => {
            // Apply the batch to the file as it is now, not as it was read: an edit made on
            // disk meanwhile (other fields, other entries) is kept, never clobbered. Checked
            // again right before the new file replaces the old one; an edit that landed
            // while the batch was encoded and synced makes it start over from that edit.
            for (let attempt = 1; ; attempt++) {
              await this.catchUp();
              const next = new Map(this.disk);
              for (const { change } of batch) {
                if (change.kind === 'put') next.set(change.id, change.entry);
                else if (change.kind === 'delete') next.delete(change.id);
                else next.clear();
              }
              const text = await this.encode([...next.values()]);
              const seen = this.seen;
              let wrote: Fingerprint | undefined;
              const options: ReplaceOptions = {
                unchanged: () => sameFile(seen, statNow(this.file)),
                written: (st) => (wrote = { ...st, hash: this.writesWholeText() ? hashOf(text) : undefined }),
              };
              if (!(await this.writeText(text, options))) {
                // Never written over an edit, however often the file changes: a last try
                // without the check lost an edit landing during it (seen under CPU load).
                if (attempt === MAX_ATTEMPTS) throw keptChanging(this.file, this.definition.id);
                await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, 2, 200)));
                continue;
              }
              this.disk = next;
              // The new file's own size and mtime: an edit right after the rename differs from them.
              this.seen = wrote ?? (await this.fingerprint(this.writesWholeText() ? text : undefined));
              return;
            }
          });
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

/** The file's size and mtime now, synchronously (the ReplaceGuard must not yield). */
function statNow(file: string): Fingerprint | undefined {
  try {
    const st = statSync(file);
    return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Rewrites started over because the file changed on disk meanwhile, each after a wait that
 * doubles from 2 ms to 200 ms (about 0.65 s in all), before the batch is refused.
 */
const MAX_ATTEMPTS = 10;

/** The batch's answer when an editor kept rewriting the file through every attempt: nothing was written. */
function keptChanging(file: string, stream: string): AppError {
  return new AppError(409, `The file of stream [${stream}] (${path.basename(file)}) kept changing on disk while this write was applied; nothing was written. Send it again.`);
}

/** Same inode, size and mtime as last seen (a missing file matches a file never seen). */
function sameFile(seen: Fingerprint | undefined, now: Fingerprint | undefined): boolean {
  if (seen === undefined || now === undefined) return seen === now;
  return seen.ino === now.ino && seen.size === now.size && seen.mtimeMs === now.mtimeMs;
}

function hashOf(text: string): string {
  return hash('sha1', text, 'base64url');
}
