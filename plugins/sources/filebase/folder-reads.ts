import { statSync } from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';

/**
 * Opening a folder's files by their bare names (issue #33). For an absolute path the kernel
 * looks up every component on each `open` (`/srv/app/data/streams/data/items/123.json`: seven);
 * for a name relative to the working directory, one. A filebase boot opens every file of a
 * stream, and with the working directory moved into the stream's folder the opens, reads and
 * closes of 100k files took ~30% less time here (docs/decisions.md, "Boot reads by bare name").
 *
 * The working directory belongs to the whole process, so it is moved only for one synchronous
 * call (no other JavaScript of this thread runs meanwhile) and moved back before that call
 * returns. Files are opened by absolute path instead where that gains little, or is not possible
 * or not safe:
 * - fewer than `BARE_NAMES_FROM` files;
 * - off the main thread (a worker may not change it);
 * - when the working directory is not the one Node names (removed or renamed since Node read
 *   its name): moving back by that name would go somewhere else.
 */
export class FolderReads {
  /** Where the working directory goes back to after a read; undefined: files are opened by absolute path. */
  private readonly home: string | undefined;

  /** `files`: how many will be read (a small folder gains too little to move the working directory for). */
  constructor(
    private readonly folder: string,
    files: number,
  ) {
    this.home = files >= BARE_NAMES_FROM ? returnPoint() : undefined;
  }

  /** `read` with what to put before a file's name to open it: '' (inside the folder) or the folder and a separator. */
  within<T>(read: (prefix: string) => T): T {
    const home = this.home;
    if (home === undefined) return read(this.folder + path.sep);
    try {
      process.chdir(this.folder);
    } catch {
      return read(this.folder + path.sep);
    }
    try {
      return read('');
    } finally {
      process.chdir(home);
    }
  }
}

/**
 * The fewest files read by bare name: ~1 ms saved at 1,000 files (~1.2 us each here). Below it
 * the working directory stays where it is, so the usual small stream never moves it.
 */
export const BARE_NAMES_FROM = 1_000;

/** The working directory's name when moving away and back by it is safe, else undefined. */
function returnPoint(): string | undefined {
  if (!isMainThread) return undefined;
  try {
    const home = process.cwd();
    const named = statSync(home);
    const actual = statSync('.');
    return named.dev === actual.dev && named.ino === actual.ino ? home : undefined;
  } catch {
    return undefined;
  }
}
