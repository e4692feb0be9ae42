import type { FileRoots, FolderListener, Logger } from '../../../kernel/index.js';
import type { StreamDefinition } from '../../streams/index.js';
import type { Entry, EntryKey, ExternalChange } from '../contracts.js';
import type { UnreadableFiles } from './unreadable-files.js';

/**
 * Where a MemorySource keeps its entries (filebase: a file per entry; file and self: one file;
 * collection: nowhere). The source owns the table, the write locks and the load lifecycle and
 * calls the store to read everything once and to make each write durable; the store reports
 * what it finds changed on disk through the StoreHost it was built with.
 */
export interface EntryStore {
  /** The source type served (`Source.type`: `filebase`, `file`...). */
  readonly type: string;
  /** Whether acknowledged writes survive a restart (`SourceCapabilities.persistent`). */
  readonly persistent: boolean;
  /**
   * Read every stored entry; each must hold its key field. The array is the engine's from then
   * on (a fresh one per call). Called when the source loads (again after a failed load).
   */
  load(): Promise<Entry[]>;
  /** Make one put durable (called under the key's lock, memory not yet updated). */
  put(id: string, entry: Entry, previous: Entry | undefined): Promise<void>;
  /** Make one delete durable (called under the key's lock, memory not yet updated). */
  delete(id: string, previous: Entry): Promise<void>;
  /** Remove every entry durably (no other write runs meanwhile). */
  truncate(all: Entry[]): Promise<void>;
  /** Throw a BadRequestError when a new key cannot be stored here (file names...). */
  checkNewKey?(id: string): void;
  /** Release what the store holds, once the writes in flight are over. */
  close?(): Promise<void>;
  /** Live sync: the folders to watch, each with what to do on an event (watched before `load` reads). */
  watchedFolders?(): Array<[folder: string, listener: FolderListener]>;
  /** Where an entry is stored (a file), for load warnings; undefined when not a file. */
  originOf?(entry: Entry): string | undefined;
  /** `Source.refresh`: catch up with an edit made outside this server before a write (absent: the source has none). */
  refresh?(key?: EntryKey): Promise<void>;
  /**
   * Asked for a key no entry has while some file cannot be read: throw (409) when it is that
   * key's own file, so the client is not told the entry does not exist (issue #27). Absent: a
   * miss is a miss.
   */
  checkMiss?(key: EntryKey): void;
}

/**
 * What a MemorySource gives its store: the stream, the limits on the files read, the pacing
 * of a long load, and the one way to report what changed on disk (a store never reaches into
 * the source otherwise).
 */
export interface StoreHost {
  readonly definition: StreamDefinition;
  /** The key field's handle. */
  readonly keyName: string;
  readonly logger: Logger;
  /** The limits on the files read, as the source was given them (`limitFiles`, before the first load). */
  readonly files: Readonly<FileLimits>;
  /** Files holding an edit that cannot be read (the last good version is served; /readyz lists them). */
  readonly unreadable: UnreadableFiles;

  /** Load the source (once; `load` runs inside it). Rejects when the load fails. */
  open(): Promise<void>;
  /** Between two slices of a load: let the event loop run; throws SourceClosedError once the source is closing. */
  nextSlice(): Promise<void>;
  /** Log the load progress of a large stream (at most about once a second). */
  progress(done: number, total: number): void;

  /** Run `task` under the write lock of one key (a disk change must not interleave with a write of that key). */
  underKeyLock<T>(id: string, task: () => Promise<T>): Promise<T>;
  /** The served entry of a key id (undefined when none; no load). */
  stored(id: string): Entry | undefined;
  /** Every served entry in key order (a snapshot). */
  all(): Entry[];
  /**
   * Live sync: serve `entry` (as read; revived by the field types here) for key `id`, or with
   * undefined serve none; nothing is persisted. Returns the change to announce, or undefined
   * when nothing changed.
   */
  replace(id: string, entry: Entry | undefined): ExternalChange | undefined;
  /** Tell the source's listeners about changes already served (`Source.onExternalChange`). */
  announce(changes: ExternalChange[]): void;
}

/** The limits on the files a store reads (`MemorySource.limitFiles`). */
export interface FileLimits {
  /** Files above this size are reported and skipped (`streams.files.max_bytes`, issue #27). */
  maxBytes: number;
  /** Where files may be read and written: a link out of these roots is not followed (issue #27). */
  roots: FileRoots | undefined;
}

/** Builds the store of one source, given what the source offers it. */
export type StoreFactory = (host: StoreHost) => EntryStore;
