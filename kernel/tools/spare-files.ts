import { closeSync, constants, type Stats, fstatSync, ftruncateSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { holdOld, letGo, replaceFileUnsynced, stampOfStats, unlinkQuietly, writeAllSync, type FileStamp } from './durable-fs.js';
import type { Logger } from '../logger.js';

/** The hidden folder, inside the folder written, that holds its spare files (never an entry: hidden names are skipped). */
export const SPARE_FOLDER = '.streams-spare';
/**
 * Spare inodes for the unflushed replacement of the files of one folder (issue #33, durable
 * writes at the file system's limit). Replacing a file the usual way (`replaceFileUnsynced`)
 * makes a new inode for the temp file and frees the replaced one: on this project's VM
 * (ext4 without a journal, online discard) the two were about a quarter of a durable PATCH's
 * time on the event loop (the allocation scans past inodes freed in the last minute; freeing
 * the blocks waits for the device's discard). Here the replaced file's inode is kept instead,
 * as a second name in a hidden folder beside the files (a hard link made before the rename),
 * and the next write goes into it: no inode made, none freed, no block freed, and the rename
 * is still the one atomic step that puts the new bytes in place.
 *
 * Safety:
 * - A spare is written only when its inode has no other name (`nlink` 1) and is this process's
 *   user's: a file also linked elsewhere (a hard-link backup such as `cp -al` or rsnapshot) is
 *   never written into, nor one made by hand by another user. A reused inode keeps its mode.
 * - A spare is opened with O_NOFOLLOW and O_NONBLOCK: a symbolic link or FIFO that stood where a
 *   file was replaced is never written through, nor waited on.
 * - A spare's bytes do not matter after a crash: the write journal, flushed before any file is
 *   replaced, puts back every acknowledged write; the folder's leftovers are removed at the
 *   next start (`clear`) and on a clean stop.
 * - Where hard links are refused (another file system under the folder, one without hard
 *   links, `protected_hardlinks`), the first refusal switches spares off for the folder.
 * - One old version of an entry at most stays in the spare folder, only while the server runs
 *   (the next write reuses it); the write journal keeps recent versions on disk the same way.
 */
/** Spares are this process's own files only (see `fill`). */
const OWN_UID = process.getuid?.() ?? 0;
/** Numbers writers apart: two on one folder (never meant to happen) still never share a spare name. */
let writers = 0;

export class SpareFiles {
  private readonly dir: string;
  private readonly prefix = `s${(++writers).toString(36)}-`;
  /**
   * Spare files free for the next write. Each write takes one (or makes one when there is none)
   * and gives back at most one, the inode it replaced: the list holds one file at most.
   */
  private readonly free: string[] = [];
  private next = 0;
  /** 'unknown' until the first use makes (or finds) the folder; 'off' once hard links are refused. */
  private state: 'unknown' | 'on' | 'off' = 'unknown';

  constructor(
    folder: string,
    private readonly logger: Logger,
  ) {
    this.dir = path.join(folder, SPARE_FOLDER);
  }

  /** Spare files free now (for tests). */
  get count(): number {
    return this.free.length;
  }

  /**
   * Replace `file` with `bytes`, not flushed, through a spare inode when there is one (see
   * the class); the new file's stamp. Same contract as `replaceFileUnsynced`. `existing`
   * false (a create) says no file is expected there: no link is tried, which would fail with
   * ENOENT (an exception made per create). Only a hint: a file there all the same is replaced
   * as well, its inode freed instead of kept.
   */
  replace(file: string, bytes: Uint8Array, existing = true): FileStamp {
    if (!this.usable()) return replaceFileUnsynced(file, bytes);
    const fresh = this.fill(bytes);
    // The replaced inode is kept as the next spare; when it is not (links refused, a name
    // taken), the old file is held open so that its release is off the loop, as before.
    const kept = existing ? this.keep(file) : null;
    const held = kept === undefined ? holdOld(file) : -1;
    try {
      renameSync(fresh.path, file);
    } catch (error) {
      // A kept name is a second name of the file still in place: never a spare.
      if (typeof kept === 'string') unlinkQuietly(kept);
      unlinkQuietly(fresh.path);
      throw error;
    } finally {
      letGo(held);
    }
    if (typeof kept === 'string') this.free.push(kept);
    return fresh.stamp;
  }

  /**
   * Remove every spare file (and the folder): at a start (what a crash left, old versions of
   * entries among them) and on a clean stop.
   */
  clear(): void {
    this.free.length = 0;
    let names: string[];
    try {
      if (!lstatSync(this.dir).isDirectory()) return;
      names = readdirSync(this.dir);
    } catch {
      return; // none
    }
    for (const name of names) unlinkQuietly(path.join(this.dir, name));
    try {
      rmdirSync(this.dir);
    } catch {
      // Something else put there: left as it is.
    }
    if (this.state === 'on') this.state = 'unknown';
  }

  /** The folder made (or found, a folder and not a link), once; false when spares are off. */
  private usable(): boolean {
    if (this.state !== 'unknown') return this.state === 'on';
    try {
      mkdirSync(this.dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return this.switchOff(error);
    }
    try {
      if (!lstatSync(this.dir).isDirectory()) return this.switchOff(new Error(`${this.dir} is not a folder`));
    } catch (error) {
      return this.switchOff(error);
    }
    this.state = 'on';
    return true;
  }

  /** A file in the spare folder holding `bytes`: a free spare written over, or a new one. */
  private fill(bytes: Uint8Array): { path: string; stamp: FileStamp } {
    const { path: file, fd, size } = this.take();
    try {
      writeAllSync(fd, bytes);
      if (size > bytes.byteLength) ftruncateSync(fd, bytes.byteLength);
      return { path: file, stamp: stampOfStats(fstatSync(fd)) };
    } catch (error) {
      unlinkQuietly(file);
      throw error;
    } finally {
      closeSync(fd);
    }
  }

  /** A spare opened for writing, with its size now: a free one fit to be written into, else a new one. */
  private take(): { path: string; fd: number; size: number } {
    for (let spare = this.free.pop(); spare !== undefined; spare = this.free.pop()) {
      let fd: number;
      try {
        // O_NOFOLLOW: a kept symbolic link is never written through; O_NONBLOCK: a kept FIFO
        // (put in the folder by hand) fails the open instead of blocking the loop.
        fd = openSync(spare, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch {
        continue; // removed by hand, or not a file: the next one (the folder is cleared at the next start)
      }
      let before: Stats | undefined;
      try {
        before = fstatSync(fd);
      } catch {
        // Unreadable: not written into (dropped below).
      }
      if (before !== undefined && before.isFile() && before.nlink === 1 && before.uid === OWN_UID) return { path: spare, fd, size: before.size };
      // Linked elsewhere (a backup), or another user's file (made by hand, then rewritten by the
      // server): never written into, so no entry file ends up another user's.
      closeSync(fd);
      unlinkQuietly(spare);
    }
    const made = this.nextName();
    return { path: made, fd: openSync(made, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644), size: 0 };
  }

  /**
   * A second name for `file`'s inode in the spare folder; null when there is no file to
   * replace (a create: nothing to hold either), undefined when it is not kept (then held).
   */
  private keep(file: string): string | null | undefined {
    const name = this.nextName();
    try {
      linkSync(file, name);
      return name;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return null;
      // A name taken by hand: nothing kept this time. Anything else: hard links are refused here.
      if (code !== 'EEXIST') this.switchOff(error);
      return undefined;
    }
  }

  private nextName(): string {
    return path.join(this.dir, `${this.prefix}${++this.next}`);
  }

  private switchOff(error: unknown): false {
    this.state = 'off';
    this.free.length = 0;
    this.logger.info({ err: error, path: this.dir }, 'spare files off for this folder (hard links refused): each write makes a new file, as before');
    return false;
  }
}
