import { opendirSync, statSync, type Dir } from 'node:fs';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { AppError, inBackground, isTempFile, readTextFile, sameStamp, stampOfStats, UnreadableTextError, type FileRoots, type FileStamp, type FolderListener, type Logger } from '../../../kernel/index.js';
import { isEntryKey, keyFromName, type StreamDefinition } from '../../streams/index.js';
import type { Entry, EntryKey, ExternalChange, SourceContext } from '../contracts.js';
import { DirectoryWriter } from '../directory-writer.js';
import { isJournalFile } from '../write-journal.js';
import type { EntryStore, StoreHost } from '../memory/entry-store.js';
import { LOAD_SLICE_MS, MemorySource, yieldToLoop } from '../memory-source.js';
import { keyId } from '../criteria/values.js';
import { mapLimit } from '../map-limit.js';
import { SourceClosedError } from '../source-errors.js';
import { assertFileKey, resolveInRoot } from '../paths.js';
import { CODECS, type EntryCodec } from './formats.js';
import { EntryFileList } from './entry-file-list.js';
import { readFiles } from './parallel-read.js';

/** Files re-read at once by a rescan of the folder (bounded: descriptors). */
const READ_CONCURRENCY = 64;
/** Stamps kept of files this store wrote or read since boot (the oldest go first; a file without one is read). */
const MAX_STAMPS = 65_536;

/**
 * `filebase`: one file per entry, `<folder>/<key>.<ext>` (`config.source.path`, default
 * `<data_path>/<id>`; `config.source.format`, default `streams.default_format`).
 */
export function createFilebaseSource(context: SourceContext): MemorySource {
  const { definition, config, root } = context;
  const source = definition.config.source;
  const folder =
    typeof source.path === 'string' && source.path !== ''
      ? resolveInRoot(root, source.path, 'source.path', definition.id)
      : path.join(config.streams.data_path, definition.id);
  const format = typeof source.format === 'string' ? source.format : config.streams.default_format;
  return new MemorySource(definition, context.logger, (host) => new FilebaseStore(host, folder, format)).loadAfter(context.after);
}

/**
 * The folder of a `filebase` stream. Loads every file once (bounded parallel reads), skips
 * and logs unreadable ones, removes leftover temp files of interrupted writes, writes through
 * a group-committing DirectoryWriter, and follows the folder's files edited on disk.
 */
export class FilebaseStore implements EntryStore {
  readonly type = 'filebase';
  readonly persistent = true;
  readonly folder: string;
  private readonly definition: StreamDefinition;
  private readonly keyName: string;
  private readonly logger: Logger;
  private readonly codec: EntryCodec;
  /** `.` and the format's first extension: what entry files are named with, as written. */
  private readonly suffix: string;
  private readonly writer: DirectoryWriter;
  /** Entries whose file is not `<key>.<ext>` (PHP files with a key stored inside). */
  private readonly fileNames = new Map<string, string>();
  /** Keys found in more than one file at load, with those files. */
  private readonly duplicates = new Map<string, string[]>();
  /**
   * Per file name, its stamp when this store last wrote it or read what it serves from it:
   * a file whose stamp is unchanged holds what is served, so the check before each write and
   * the disk event of the store's own write cost one stat instead of two reads (issue #33:
   * those reads were most of a durable PATCH's work).
   */
  private readonly stamps = new Map<string, FileStamp>();
  /** Writes in flight, by file name: a disk event of one waits for it (its stamp comes with it). */
  private readonly writing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly host: StoreHost,
    folder: string,
    format: string,
  ) {
    const { definition } = host;
    this.definition = definition;
    this.keyName = host.keyName;
    this.logger = host.logger;
    const codec = CODECS[format];
    if (!codec) throw new AppError(500, `Stream [${definition.id}]: filebase format "${format}" is not one of ${Object.keys(CODECS).join(', ')}.`);
    this.codec = codec;
    this.suffix = `.${codec.extensions[0]!}`;
    this.folder = folder;
    // The folder's link check (issue #27) once per group-committed batch, not per file: it
    // resolves every component of the path (issue #33, durable writes).
    this.writer = new DirectoryWriter(folder, this.logger, () => this.assertInRoots());
  }

  /** The application's roots, as the source was given them (a link out of them is not followed, issue #27). */
  private get fileRoots(): FileRoots | undefined {
    return this.host.files.roots;
  }

  /** Files above this size are reported and skipped (`streams.files.max_bytes`). */
  private get maxBytes(): number {
    return this.host.files.maxBytes;
  }

  /**
   * The entry files of the folder in read order (none when it is missing), listed in batches on
   * this thread between slices; temp files of interrupted writes are removed (the entry's
   * previous file is intact). Not `readdir`: its scandir sorts every name in the thread pool
   * (0.5 s at 1M files) and what it allocates there (about 50 MB at 1M files) stays in that
   * thread's malloc arena, resident for the life of the process. `removeTemps` only at load:
   * later, a temp file may be a write in flight.
   */
  private async listEntryFiles(removeTemps = true, journals?: string[]): Promise<EntryFileList> {
    const names = new EntryFileList(this.codec.extensions[0]!);
    // A folder that is a link out of the application's roots is not listed (issue #27).
    if (this.fileRoots?.check(this.folder) !== undefined) return names;
    let dir: Dir;
    try {
      dir = opendirSync(this.folder, { bufferSize: 1024 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return names;
      throw error;
    }
    const temps: string[] = [];
    try {
      while (!this.listSlice(dir, names, temps, removeTemps, journals)) await this.host.nextSlice();
    } finally {
      dir.closeSync();
    }
    for (const name of temps) await unlink(path.join(this.folder, name)).catch(() => undefined);
    await names.sortYielding(() => this.host.nextSlice());
    return names;
  }

  /**
   * One slice of a listing: true once the folder is read to its end, false after LOAD_SLICE_MS.
   * A synchronous function of its own, because a loop inside an async function resumes
   * unoptimized after each await: the same listing of 100k files took ~90 ms that way and
   * ~60 here (issue #33). It runs once per file at boot, mostly before V8 optimizes it, so the
   * cheap tests come first.
   */
  private listSlice(dir: Dir, names: EntryFileList, temps: string[], removeTemps: boolean, journals: string[] | undefined): boolean {
    const started = performance.now();
    for (let n = 1; ; n++) {
      const found = dir.readSync();
      if (found === null) return true;
      const name = found.name;
      // Hidden names (temp files among them) are never entries; the usual name ends with the format's first extension.
      if (name.charCodeAt(0) === 46) {
        if (removeTemps && isTempFile(name)) temps.push(name);
        else if (journals !== undefined && isJournalFile(name)) journals.push(name);
      } else if (name.endsWith(this.suffix) || this.isEntryFile(name)) {
        // Only links need resolving (the listing tells them apart for free): one out of the roots is skipped.
        if (!found.isSymbolicLink() || this.fileRoots?.check(this.folder + path.sep + name) === undefined) names.add(name);
      }
      if ((n & 1023) === 0 && performance.now() - started > LOAD_SLICE_MS) return false;
    }
  }

  async load(): Promise<Entry[]> {
    // Spare files a crash left (old versions of entries among them) go first; a clean stop removes its own.
    this.writer.clearSpares();
    const journals: string[] = [];
    let wanted = await this.listEntryFiles(true, journals);
    if (journals.length > 0) {
      // An unclean stop left a write journal: what it holds goes back into the files, which are
      // then listed again (only after a crash; the listing found them, so a boot lists once).
      await this.writer.recover(journals);
      wanted = await this.listEntryFiles();
    }
    this.fileNames.clear();
    // Small files read synchronously in slices of LOAD_SLICE_MS, yielding between slices:
    // three to four times faster than one thread-pool round trip per open/stat/read/close
    // (100k files: about 1 s instead of 3-4 s), and /healthz still answers between slices.
    // Large folders are read by a worker thread too (parallel-read.ts).
    const loaded = new Array<Entry | undefined>(wanted.length);
    // Entries whose file is not named after their key, by index: set in file order after the
    // reads (the two threads visit files in no particular order).
    const misnamed: number[] = [];
    let visited = 0;
    const visit = (index: number, text: string | undefined, error: unknown): void => {
      visited++;
      try {
        if (text === undefined) throw error;
        const entry = this.decodeFile(text, () => wanted.nameAt(index));
        const key = entry[this.keyName];
        // A file named after its key, as nearly all are, is told by comparing numbers: no name
        // spelled per file (100k of them at boot).
        const integer = wanted.integerAt(index);
        if (!(integer >= 0 && key === integer) && wanted.nameAt(index) !== this.standardName(keyId(key))) misnamed.push(index);
        loaded[index] = entry;
      } catch (failure) {
        // Named in /readyz, and its writes refused until it is fixed (its bytes are never rewritten).
        this.host.unreadable.mark(this.folder + path.sep + wanted.nameAt(index), `skipping unreadable entry file (${reasonOf(failure)})`, failure, false);
      }
    };
    await readFiles(
      this.folder,
      wanted,
      visit,
      async () => {
        this.host.progress(visited, wanted.length);
        await this.host.nextSlice();
      },
      LOAD_SLICE_MS,
      undefined,
      this.maxBytes,
    );
    misnamed.sort((x, y) => x - y);
    for (const index of misnamed) this.fileNames.set(keyId(loaded[index]![this.keyName]), wanted.nameAt(index));
    this.host.progress(wanted.length, wanted.length);
    // Two files naming one key (`1.json` and `one.json` both with id 1): one is served, and a
    // write would go to one file while the next boot may read the other. Writes to such a key
    // are refused until an operator removes one of the files.
    // Only a file not named after its key can repeat a key: each other one holds the key its
    // name spells, and names are unique. So the common folder skips this pass, whose map of
    // every key was 50 MB or more of garbage at 1M entries, left in the heap when serving starts.
    this.duplicates.clear();
    if (this.fileNames.size > 0) this.findDuplicates(loaded, wanted);
    // The entries read, in place (the engine keeps this list as its key order).
    let kept = 0;
    for (let i = 0; i < loaded.length; i++) if (loaded[i] !== undefined) loaded[kept++] = loaded[i];
    loaded.length = kept;
    return loaded as Entry[];
  }

  /**
   * Keys found in more than one file (`1.json` and `one.json` both with id 1), logged and
   * refused for writes (see assertSingleFile). `loaded[i]` is what file `names.nameAt(i)` holds.
   * The first file of each key by index, a list only for keys in several files (a list per
   * key was 1M short-lived arrays at 1M entries).
   */
  private findDuplicates(loaded: ReadonlyArray<Entry | undefined>, names: EntryFileList): void {
    const first = new Map<string, number>();
    const several = new Map<string, string[]>();
    loaded.forEach((entry, index) => {
      if (entry === undefined) return;
      const id = keyId(entry[this.keyName]);
      const at = first.get(id);
      if (at === undefined) first.set(id, index);
      else several.set(id, [...(several.get(id) ?? [names.nameAt(at)]), names.nameAt(index)]);
    });
    for (const [id, files] of several) {
      this.duplicates.set(id, files);
      this.logger.warn({ key: id, files }, 'one entry key in several files: its writes are refused until one file is removed');
    }
  }

  /** Names of entry files: `<name>.<ext>` with one of the format's extensions, not hidden, not temporary. */
  private isEntryFile(name: string): boolean {
    if (name.startsWith('.') || isTempFile(name)) return false;
    const dot = name.lastIndexOf('.');
    return dot > 0 && this.codec.extensions.includes(name.slice(dot + 1));
  }

  /** The entry a file holds, its key set (from inside the file, else from the file's name, spelled only then). */
  private decodeFile(text: string, nameOf: () => string): Entry {
    const entry = this.codec.parse(text);
    if (!isEntryKey(entry[this.keyName])) {
      const name = nameOf();
      entry[this.keyName] = keyFromName(name.slice(0, name.lastIndexOf('.')), this.definition);
    }
    return entry;
  }

  private standardName(id: string): string {
    return `${id}${this.suffix}`;
  }

  /** The key id whose entry is served from this file, if any. */
  private idOfFile(name: string): string | undefined {
    for (const [id, file] of this.fileNames) if (file === name) return id;
    const base = name.slice(0, name.lastIndexOf('.'));
    return name === this.standardName(base) && !this.fileNames.has(base) && this.host.stored(base) !== undefined ? base : undefined;
  }

  watchedFolders(): Array<[string, FolderListener]> {
    return [[this.folder, (name) => this.queueChange(name)]];
  }

  /** Names changed on disk, not handled yet (a folder copied in is thousands at once). */
  private readonly changedNames = new Set<string | undefined>();
  private draining = false;

  /**
   * Disk events are handled READ_CONCURRENCY files at a time, the event loop free between
   * two groups (issue #27): 5,000 files landing at once started 5,000 reads together, and
   * their completions held the loop for about 270 ms (/healthz with it).
   */
  private queueChange(name: string | undefined): void {
    this.changedNames.add(name);
    if (this.draining) return;
    this.draining = true;
    void (async () => {
      try {
        while (this.changedNames.size > 0) {
          const group: Array<string | undefined> = [];
          for (const next of this.changedNames) {
            group.push(next);
            this.changedNames.delete(next);
            if (group.length === READ_CONCURRENCY) break;
          }
          await Promise.all(group.map((changed) => this.fileChanged(changed).catch((error: unknown) => this.logger.error({ err: error, path: this.folder }, 'catching up with an edit on disk failed'))));
          await yieldToLoop();
        }
      } finally {
        this.draining = false;
      }
    })();
  }

  /**
   * A key whose file cannot be read (not UTF-8, not parseable, over the size limit) since the
   * boot has no last good version to serve: its read answers 409 naming why, not a 404 that
   * would tell the client the entry does not exist (issue #27). The source asks only while
   * some file is unreadable, so GET one stays synchronous otherwise.
   */
  checkMiss(key: EntryKey): void {
    const reason = this.host.unreadable.reasonOf(path.join(this.folder, this.fileOf(keyId(key))));
    if (reason !== undefined) throw new AppError(409, `The entry [${keyId(key)}] is not served: ${reason}. Fix its file on disk.`);
  }

  /** Before a write of `key`: catch up with an edit of its file made on disk (one small read). */
  async refresh(key?: EntryKey): Promise<void> {
    await this.host.open();
    if (key === undefined) return;
    const name = this.fileOf(keyId(key));
    await this.fileChanged(name);
    // The broken edit is never overwritten blind: the operator fixes (or removes) it first.
    if (this.host.unreadable.has(path.join(this.folder, name))) {
      throw new AppError(409, `The file of entry [${keyId(key)}] was edited on disk and cannot be read; fix it before writing.`);
    }
  }

  /**
   * Live sync (issue #14): one entry file was added, changed or removed on disk (`name`
   * undefined: anything in the folder may have). The file is read and compared with what
   * is served, under its key's write lock: the server's own writes (same text) change
   * nothing; an edit that cannot be parsed keeps the last good version.
   */
  private async fileChanged(name: string | undefined): Promise<void> {
    // Temp files (every durable write makes one) are told apart by name alone, before any await.
    if (name !== undefined && !this.isEntryFile(name)) return;
    try {
      await this.host.open();
    } catch {
      return; // Not loadable now: the next successful load reads every file anyway.
    }
    if (name === undefined) return this.rescan();
    const file = this.folder + path.sep + name;
    // The event of this store's own rename may come before the write is acknowledged.
    await this.writing.get(name);
    const now = stampOf(file);
    if (sameStamp(this.stamps.get(name), now ?? undefined)) return;
    // No such file, and none served from it (a create's check): nothing to do but forget it as a
    // second file of a key.
    if (now === null && this.idOfFile(name) === undefined) return this.duplicatesOf(name);
    // Which keys this file concerns: the one it held, and the one it holds now. Each is then
    // handled under its key's write lock, reading the file again there: an API write or delete
    // of that key that ran meanwhile is never undone by a read made before it.
    const first = await this.readEntryFile(name);
    const formerId = this.idOfFile(name);
    const nowId = first.entry === undefined ? undefined : keyId(first.entry[this.keyName]);
    if (first.error !== undefined) return this.host.unreadable.mark(file, first.error.reason, first.error.cause);
    const changes: ExternalChange[] = [];
    for (const id of new Set([formerId, nowId])) {
      if (id === undefined) continue;
      await this.host.underKeyLock(id, async () => {
        // Taken before the read: an edit between the two only makes the next check read again.
        const stamp = stampOf(file);
        const current = await this.readEntryFile(name);
        if (current.error !== undefined) return this.host.unreadable.mark(file, current.error.reason, current.error.cause);
        this.host.unreadable.mark(file, undefined);
        const holds = current.entry === undefined ? undefined : keyId(current.entry[this.keyName]);
        if (holds !== id) {
          // The file no longer holds this key (removed, or its key edited): the entry is gone
          // when this file was the one serving it.
          if (this.idOfFile(name) !== id) return;
          this.fileNames.delete(id);
          const change = this.host.replace(id, undefined);
          if (change) changes.push(change);
          return;
        }
        const entry = current.entry!;
        const served = this.host.stored(id);
        // This server's own write (or nothing new): the file holds exactly what is served.
        // The stamp is kept only where what is served is what the file holds (here and after a
        // replace below): a file set aside (a second file of a key) must be read again later.
        if (served !== undefined && this.fileOf(id) === name && this.codec.stringify(served) === current.text) {
          if (stamp) this.stamp(name, stamp);
          return;
        }
        if (served !== undefined && this.fileOf(id) !== name) {
          const other = path.join(this.folder, this.fileOf(id));
          if (await readTextFile(other, this.maxBytes).then(() => true, () => false)) {
            this.duplicates.set(id, [this.fileOf(id), name]);
            this.logger.warn({ key: id, files: this.duplicates.get(id) }, 'one entry key in several files: its writes are refused until one file is removed');
            return;
          }
        }
        if (name === this.standardName(id)) this.fileNames.delete(id);
        else this.fileNames.set(id, name);
        if (stamp) this.stamp(name, stamp);
        const change = this.host.replace(id, entry);
        if (change) changes.push(change);
      });
    }
    if (first.entry === undefined) this.duplicatesOf(name);
    this.host.announce(changes);
  }

  /** One entry file as it is now: its text and entry, nothing when missing, or why it cannot be read. */
  private async readEntryFile(name: string): Promise<{ text?: string; entry?: Entry; error?: { reason: string; cause: unknown } }> {
    const file = path.join(this.folder, name);
    const outside = await this.fileRoots?.checkAsync(file);
    if (outside !== undefined) return { error: { reason: `the entry file is not read: ${outside}`, cause: undefined } };
    let text: string;
    try {
      text = await readTextFile(file, this.maxBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.fileRoots?.forget(file);
        return {};
      }
      return { error: { reason: `the entry file cannot be read (${reasonOf(error)})`, cause: error } };
    }
    try {
      return { text, entry: this.decodeFile(text, () => name) };
    } catch (error) {
      return { error: { reason: `the entry file was edited on disk and cannot be read (${(error as Error).message})`, cause: error } };
    }
  }

  /** A file of a key stored twice was removed: the other one is the only one now. */
  private duplicatesOf(name: string): void {
    for (const [id, files] of this.duplicates) {
      if (!files.includes(name)) continue;
      const rest = files.filter((f) => f !== name);
      if (rest.length > 1) this.duplicates.set(id, rest);
      else {
        this.duplicates.delete(id);
        const next = rest[0];
        if (next !== undefined) {
          this.stamps.delete(next);
          void inBackground(this.logger, `reading ${next} again`, () => this.fileChanged(next));
        }
      }
    }
  }

  /** The folder appeared, was re-created or removed: compare every file with what is served. */
  private async rescan(): Promise<void> {
    // Listed like a load (not `readdir`: see listEntryFiles), without touching temp files.
    let listed: EntryFileList;
    try {
      listed = await this.listEntryFiles(false);
    } catch (error) {
      if (error instanceof SourceClosedError) return;
      throw error;
    }
    const present = new Set<string>();
    for (let i = 0; i < listed.length; i++) present.add(listed.nameAt(i));
    const gone = this.host.all()
      .map((entry) => this.fileOf(keyId(entry[this.keyName])))
      .filter((name) => !present.has(name));
    await mapLimit([...present, ...gone], READ_CONCURRENCY, (name) => this.fileChanged(name));
  }

  /** A key stored in several files cannot be written safely (see load). */
  private assertSingleFile(id: string): void {
    const files = this.duplicates.get(id);
    if (files) throw new AppError(409, `Entry [${id}] is stored in several files (${files.join(', ')}): remove all but one before writing it.`);
  }

  /** Never write through a folder that is a link out of the application's roots (issue #27); the writer runs it before each batch. */
  private assertInRoots(): void {
    const outside = this.fileRoots?.check(this.folder);
    if (outside !== undefined) throw new AppError(409, `The entries folder of stream [${this.definition.id}] is not written: ${outside}.`);
  }

  originOf(entry: Entry): string {
    return path.join(this.folder, this.fileOf(keyId(entry[this.keyName])));
  }

  private fileOf(id: string): string {
    return this.fileNames.get(id) ?? this.standardName(id);
  }

  checkNewKey(id: string): void {
    assertFileKey(id);
  }

  /** After the last write (the source drained them): the write journal is checkpointed away. */
  async close(): Promise<void> {
    await this.writer.close();
  }

  async put(id: string, entry: Entry, previous: Entry | undefined): Promise<void> {
    this.assertSingleFile(id);
    const name = this.fileOf(id);
    this.stamps.delete(name);
    const written = this.writer.write(name, this.codec.stringify(entry), previous !== undefined);
    this.writing.set(name, written.catch(() => undefined));
    try {
      this.stamp(name, await written);
    } finally {
      this.writing.delete(name);
    }
  }

  async delete(id: string): Promise<void> {
    this.assertSingleFile(id);
    const name = this.fileOf(id);
    this.stamps.delete(name);
    await this.writer.remove(name);
    this.fileNames.delete(id);
  }

  async truncate(all: Entry[]): Promise<void> {
    this.stamps.clear();
    await Promise.all(all.map((entry) => this.writer.remove(this.fileOf(String(entry[this.keyName])))));
    this.fileNames.clear();
  }

  private stamp(name: string, stamp: FileStamp): void {
    this.stamps.delete(name);
    this.stamps.set(name, stamp);
    if (this.stamps.size > MAX_STAMPS) this.stamps.delete(this.stamps.keys().next().value!);
  }
}

/**
 * A file's stamp now; null when there is no such file, undefined when it cannot be told (then
 * it is read to find out). A stat on the loop: microseconds, where a thread-pool round trip
 * cost more (and a missing file no exception).
 */
function stampOf(file: string): FileStamp | null | undefined {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st === undefined ? null : stampOfStats(st);
  } catch {
    return undefined;
  }
}

/** Why a file could not be read, for the log and /readyz: the errno code, or the reason it was not decoded. */
function reasonOf(error: unknown): string {
  if (error instanceof UnreadableTextError) return error.message;
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}
