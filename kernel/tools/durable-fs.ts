import { randomBytes } from 'node:crypto';
import { close, closeSync, constants, fdatasync, fstat, fstatSync, fsync, open as openFd, openSync, rename as renameFd, renameSync, unlinkSync, write as writeFd, writeSync } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { storageHealthOf } from './storage-health.js';

/**
 * Durable file primitives shared by every writer (definitions, filebase, file, self).
 * A write is acknowledged only once its bytes and its directory entry are on disk:
 * temp file in the same folder -> fsync -> rename over the target -> fsync the folder.
 * A crash at any point leaves either the old file or the new one, never half of one.
 */

/**
 * Make a folder's entries (renames, unlinks) durable. Opened in the thread pool: the open's
 * lookup waits while a rename in that folder holds it, which is most of the time under load.
 */
export async function fsyncDir(dir: string): Promise<void> {
  const fd = await openRead(dir);
  try {
    await syncAll(fd);
  } finally {
    closeSync(fd);
  }
}

/** fdatasync in the thread pool: a file's bytes and what reading them back needs (its size). */
export function flushDescriptor(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

/** Write every byte on the calling thread (a write may take fewer than asked). */
export function writeAllSync(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.byteLength; ) at += writeSync(fd, bytes, at, bytes.byteLength - at);
}

/**
 * Flush a file already in place by its name (its bytes and size); false when there is none.
 * For a journal's checkpoint: the files it wrote without a flush become durable, then the
 * journal can go.
 */
export async function flushFile(file: string): Promise<boolean> {
  let fd: number;
  try {
    fd = await openRead(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  try {
    await flushDescriptor(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Temp names start with a dot and end in .tmp so loaders can skip (and clean) leftovers. */
export function isTempFile(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/**
 * Atomic but not yet durable: the bytes are on disk and the file is complete under its
 * name, but the rename itself needs `fsyncDir` of the folder before it survives a crash.
 * Callers batching several files share that one folder fsync.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, options: ReplaceOptions = {}): Promise<boolean> {
  const health = storageHealthOf(file);
  let written: boolean;
  try {
    health.checkInjected();
    written = await writeAtomic(file, data, options);
  } catch (error) {
    throw health.error(error);
  }
  health.written();
  return written;
}

/**
 * Asked right before the new file replaces the old one (its bytes already on disk): false
 * when the target changed meanwhile (an edit on disk), so a read-modify-write of a whole
 * file can start over from the edit instead of replacing it. Nothing is written then.
 * Synchronous, and followed by a synchronous rename: nothing can run between the check
 * and the replace in this process, and another process has only microseconds.
 */
export type ReplaceGuard = () => boolean;

/** For writers that must tell their own file from an edit made after it (live file sync). */
export interface ReplaceOptions {
  unchanged?: ReplaceGuard;
  /**
   * Told the new file's stamp, read from it before the rename (a rename keeps all three):
   * a stat after the rename could already see an edit made right after it.
   */
  written?: (stat: FileStamp) => void;
}

/**
 * What tells a file this process wrote from an edit made after it without reading it: the
 * inode (a replace by rename makes a new one), the size and the mtime (an edit in place
 * changes it), as git's index does. Compare with `sameStamp`.
 */
export interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The stamp of a file's stats. */
export function stampOfStats(st: { ino: number; size: number; mtimeMs: number }): FileStamp {
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}

export function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  return a !== undefined && b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Temp names: unique per process by a counter (no random bytes per write); the process id and
 * a random part per process keep two processes (a tool beside the server) apart.
 */
const TEMP_PREFIX = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
let tempCounter = 0;

/**
 * Small writes (most entry files) write their bytes, read their stamp and close on the loop:
 * each is microseconds (the page cache, the inode in memory), where a round trip through the
 * thread pool costs the event loop more than the call itself, and on the one core a server is
 * often given both compete (issue #33). Calls that change the folder (open creating the temp
 * file, rename) and the flushes stay in the pool: on ext4 they wait for a journal commit in
 * progress, and a rename over an existing file also for the old file's release (measured: a
 * synchronous rename was a third of a durable PATCH's time on the loop). Larger writes keep
 * every call off the loop.
 */
const SYNC_WRITE_BYTES = 64 * 1024;

const openRead = (file: string): Promise<number> => new Promise((resolve, reject) => openFd(file, 'r', (error, fd) => (error ? reject(error) : resolve(fd))));
const openW = (file: string): Promise<number> => new Promise((resolve, reject) => openFd(file, 'w', 0o644, (error, fd) => (error ? reject(error) : resolve(fd))));
const writeAll = (fd: number, data: Uint8Array): Promise<void> =>
  new Promise((resolve, reject) => {
    const next = (offset: number): void =>
      writeFd(fd, data, offset, data.byteLength - offset, null, (error, n) => {
        if (error) reject(error);
        else if (offset + n < data.byteLength) next(offset + n);
        else resolve();
      });
    next(0);
  });
const syncAll = (fd: number): Promise<void> => new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
const stampOf = (fd: number): Promise<FileStamp> =>
  new Promise((resolve, reject) => fstat(fd, (error, st) => (error ? reject(error) : resolve(stampOfStats(st)))));
const closeFd = (fd: number): Promise<void> => new Promise((resolve, reject) => close(fd, (error) => (error ? reject(error) : resolve())));
const renameTo = (from: string, to: string): Promise<void> => new Promise((resolve, reject) => renameFd(from, to, (error) => (error ? reject(error) : resolve())));

/** The new file, complete and flushed under its temp name: its descriptor is closed, its stamp told. */
async function writeTemp(temp: string, bytes: Uint8Array, written: ReplaceOptions['written']): Promise<void> {
  const small = bytes.byteLength <= SYNC_WRITE_BYTES;
  const fd = await openW(temp);
  try {
    if (small) {
      writeAllSync(fd, bytes);
    } else {
      await writeAll(fd, bytes);
    }
    // fdatasync: the bytes and what is needed to read them back (the size); the name is made
    // durable by the folder's fsync after the rename.
    await flushDescriptor(fd);
    if (written !== undefined) {
      const st = small ? fstatSync(fd) : await stampOf(fd);
      written(stampOfStats(st));
    }
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // The write's own error is the one to report.
    }
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (small) closeSync(fd);
  else await closeFd(fd);
}

/** A temp name beside `file` (by hand: path.join would normalize again per write what only gains a name). */
function tempPathFor(file: string): string {
  const cut = file.lastIndexOf(path.sep) + 1;
  return `${file.slice(0, cut)}.${file.slice(cut)}.${TEMP_PREFIX}${(++tempCounter).toString(36)}.tmp`;
}

/**
 * Atomic but NOT flushed, all on the calling thread: temp file, rename over `file`; returns the
 * new file's stamp. Only for a writer whose journal already holds these bytes durably (the
 * filebase group commit, plugins/sources/write-journal.ts): a crash is repaired from there.
 * On the loop because, with no flush to wait for, the calls are CPU work: measured against
 * renames in the thread pool (concurrent ones contend for the folder's lock, and spin for it on
 * one core; one at a time pays a round trip each), PATCH 3.8k vs 2.7-2.8k req/s.
 */
export function replaceFileUnsynced(file: string, bytes: Uint8Array): FileStamp {
  const temp = writeTempSync(file, bytes);
  const old = holdOld(file);
  try {
    renameSync(temp.path, file);
  } catch (error) {
    unlinkQuietly(temp.path);
    throw error;
  } finally {
    letGo(old);
  }
  return temp.stamp;
}

/** Remove a file, not flushed (see replaceFileUnsynced); false when there was none. */
export function removeFileUnsynced(file: string): boolean {
  const old = holdOld(file);
  try {
    unlinkSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  } finally {
    letGo(old);
  }
}

/**
 * The file a rename or unlink is about to replace, held open so that the last reference to its
 * inode goes in the thread pool (`letGo`), not in the call on the loop: freeing its blocks
 * waits there for the device when the file system discards freed blocks online (`-o discard`,
 * this VM's ext4: `blkdev_issue_discard` -> `submit_bio_wait` was a fifth of the loop's waits
 * in a durable PATCH). O_NONBLOCK: a FIFO put there by hand must not block the open;
 * O_NOFOLLOW: a link is replaced, not what it points to, so nothing beyond it is opened.
 */
export function holdOld(file: string): number {
  try {
    return openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return -1; // none (or unreadable): the rename or unlink frees it, as it would anyway
  }
}

/** Close what `holdOld` held, in the thread pool (nothing for -1). */
export function letGo(fd: number): void {
  if (fd >= 0) close(fd, () => undefined);
}

/** A complete, unflushed temp file beside `file` holding `bytes`, and its stamp. */
function writeTempSync(file: string, bytes: Uint8Array): { path: string; stamp: FileStamp } {
  const temp = tempPathFor(file);
  const fd = openSync(temp, 'w', 0o644);
  let stamp: FileStamp;
  try {
    writeAllSync(fd, bytes);
    stamp = stampOfStats(fstatSync(fd));
  } catch (error) {
    closeSync(fd);
    unlinkQuietly(temp);
    throw error;
  }
  closeSync(fd);
  return { path: temp, stamp };
}

export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // The caller's own error is the one to report; a leftover temp file is removed at the next load.
  }
}

async function writeAtomic(file: string, data: string | Uint8Array, { unchanged, written }: ReplaceOptions): Promise<boolean> {
  const temp = tempPathFor(file);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  await writeTemp(temp, bytes, written);
  try {
    if (unchanged !== undefined) {
      if (!unchanged()) {
        await unlink(temp).catch(() => undefined);
        return false;
      }
      renameSync(temp, file);
    } else {
      await renameTo(temp, file);
    }
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  return true;
}

/**
 * Create a folder (and missing parents) durably: a new folder's own entry lives in its
 * parent, so each parent that gained one is fsynced; otherwise the first files written
 * into a new folder could vanish with it after a crash.
 */
export async function ensureDirDurable(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  const created: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    created.push(at);
    if (at === path.resolve(first) || path.dirname(at) === at) break;
  }
  for (const folder of created) await fsyncDir(path.dirname(folder));
}

/** Write durably; with `options.unchanged`, false (nothing written) when the target changed meanwhile (see ReplaceGuard). */
export async function writeFileDurable(file: string, data: string | Uint8Array, options?: ReplaceOptions): Promise<boolean> {
  const dir = path.dirname(file);
  const health = storageHealthOf(file);
  try {
    await ensureDirDurable(dir);
  } catch (error) {
    throw health.error(error);
  }
  if (!(await writeFileAtomic(file, data, options))) return false;
  try {
    await fsyncDir(dir);
  } catch (error) {
    throw health.error(error);
  }
  return true;
}

/** Remove a file durably; a missing file is not an error (the goal state holds). */
export async function removeFileDurable(file: string): Promise<boolean> {
  const health = storageHealthOf(file);
  try {
    health.checkInjected();
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw health.error(error);
  }
  try {
    await fsyncDir(path.dirname(file));
  } catch (error) {
    throw health.error(error);
  }
  return true;
}
