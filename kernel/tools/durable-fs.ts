import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
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
   * Told the new file's size and mtime, read from it before the rename (a rename keeps
   * both): a stat after the rename could already see an edit made right after it.
   */
  written?: (stat: { size: number; mtimeMs: number }) => void;
}

async function writeAtomic(file: string, data: string | Uint8Array, { unchanged, written }: ReplaceOptions): Promise<boolean> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
    if (written !== undefined) {
      const st = await handle.stat();
      written({ size: st.size, mtimeMs: st.mtimeMs });
    }
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    if (unchanged !== undefined) {
      if (!unchanged()) {
        await unlink(temp).catch(() => undefined);
        return false;
      }
      renameSync(temp, file);
    } else {
      await rename(temp, file);
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
