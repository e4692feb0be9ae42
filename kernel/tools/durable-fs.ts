import { randomBytes } from 'node:crypto';
import { close, fdatasync, fstat, open as openFd, rename as renameFd, renameSync, write as writeFd } from 'node:fs';
import { mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { storageHealthOf } from './storage-health.js';

/**
 * Durable file primitives shared by every writer (definitions, filebase, file, self).
 * A write is acknowledged only once its bytes and its directory entry are on disk:
 * temp file in the same folder -> fsync -> rename over the target -> fsync the folder.
 * A crash at any point leaves either the old file or the new one, never half of one.
 */

/** Make a folder's entries (renames, unlinks) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
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

export function sameStamp(a: FileStamp | undefined, b: FileStamp | undefined): boolean {
  return a !== undefined && b !== undefined && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/**
 * Temp names: unique per process by a counter (no random bytes per write); the process id and
 * a random part per process keep two processes (a tool beside the server) apart.
 */
const TEMP_PREFIX = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;
let tempCounter = 0;

// The callback API on raw descriptors: a durable write is 6 system calls, and each through
// fs/promises' FileHandle cost a wrapper object and a promise more (issue #33, writes per second).
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
const syncData = (fd: number): Promise<void> => new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
const stampOf = (fd: number): Promise<FileStamp> =>
  new Promise((resolve, reject) => fstat(fd, (error, st) => (error ? reject(error) : resolve({ ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }))));
const closeFd = (fd: number): Promise<void> => new Promise((resolve, reject) => close(fd, (error) => (error ? reject(error) : resolve())));
const renameTo = (from: string, to: string): Promise<void> => new Promise((resolve, reject) => renameFd(from, to, (error) => (error ? reject(error) : resolve())));

async function writeAtomic(file: string, data: string | Uint8Array, { unchanged, written }: ReplaceOptions): Promise<boolean> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${TEMP_PREFIX}${(++tempCounter).toString(36)}.tmp`);
  const fd = await openW(temp);
  try {
    await writeAll(fd, typeof data === 'string' ? Buffer.from(data) : data);
    // fdatasync: the bytes and what is needed to read them back (the size); the name is made
    // durable by the folder's fsync after the rename.
    await syncData(fd);
    if (written !== undefined) written(await stampOf(fd));
  } catch (error) {
    await closeFd(fd).catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await closeFd(fd);
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
