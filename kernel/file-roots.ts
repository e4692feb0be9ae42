import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from './logger.js';

/**
 * Nothing outside the root (issue #27): every file the server loads or writes (definitions,
 * imports, entry files, single source files, the folders that hold them) must resolve, links
 * followed, inside the application root or the `--data` folder. A symlink (or `..` through
 * one) leading elsewhere is not followed: not served, not loaded, not written; logged once
 * with its path and listed as a warning in /readyz. Links inside the roots keep working, as
 * git keeps a work tree's links to its own files and refuses the others.
 */
export class FileRoots {
  private readonly roots: string[];
  /** Paths refused, with why (for /readyz `details.streams.warnings`). */
  private readonly refused = new Map<string, string>();

  constructor(
    roots: string[],
    private readonly logger?: Logger,
  ) {
    this.roots = [...new Set(roots.map((root) => realOf(path.resolve(root))))];
  }

  /** Undefined when `file` (existing or not) resolves inside a root; else why not (logged once). */
  check(file: string): string | undefined {
    let real: string;
    try {
      real = realOf(file);
    } catch (error) {
      // A link loop (ELOOP) or an unreadable folder: not something to follow either.
      return this.refuse(file, `it cannot be resolved (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    if (this.roots.some((root) => isInsideFolder(root, real))) {
      this.refused.delete(file);
      return undefined;
    }
    return this.refuse(file, 'it leads outside the application root (a symbolic link): not followed');
  }

  /** `check` without blocking on the file system (live sync, writes). */
  async checkAsync(file: string): Promise<string | undefined> {
    let real: string;
    try {
      real = await realpath(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return this.refuse(file, `it cannot be resolved (${code ?? String(error)})`);
      return this.check(file);
    }
    if (this.roots.some((root) => isInsideFolder(root, real))) {
      this.refused.delete(file);
      return undefined;
    }
    return this.refuse(file, 'it leads outside the application root (a symbolic link): not followed');
  }

  /** Forget a refused path (removed from disk). */
  forget(file: string): void {
    this.refused.delete(file);
  }

  /** Every path refused now, with why. */
  warnings(): Array<{ path: string; reason: string }> {
    return [...this.refused].map(([file, reason]) => ({ path: file, reason }));
  }

  private refuse(file: string, reason: string): string {
    if (this.refused.get(file) !== reason) {
      this.refused.set(file, reason);
      this.logger?.warn({ path: file }, `file not followed: ${reason}`);
    }
    return reason;
  }
}

/** True when `target` is `root` or inside it (paths compared as given: resolve them first). */
export function isInsideFolder(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The real path of `file`; for a path that does not exist (yet), its nearest existing folder's, joined with the rest. */
function realOf(file: string): string {
  try {
    // libc's realpath (one call) rather than node's JS walk (an lstat per path component from
    // JavaScript): every durable write checks its folder (issue #33).
    return realpathSync.native(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    const parent = path.dirname(file);
    if (parent === file) return file;
    return path.join(realOf(parent), path.basename(file));
  }
}
