import { statSync, watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from '../logger.js';
import { inBackground } from './background.js';

/**
 * Told which names changed in a folder; `undefined` means "anything may have changed"
 * (the folder appeared, was re-created, or the platform gave no name): list it again.
 */
export type FolderListener = (name: string | undefined) => void;

interface Watched {
  listeners: Set<FolderListener>;
  watcher?: FSWatcher;
  /** Names seen since the last delivery (`undefined` inside: a full rescan). */
  pending: Set<string | undefined>;
  timer?: NodeJS.Timeout;
  retry?: NodeJS.Timeout;
  /** The watched folder's inode: a folder replaced by another (moved in over it) is watched again. */
  ino?: number;
}

export interface FolderWatcherOptions {
  /** Events within this window are delivered together (an editor's save is several events). */
  debounceMs?: number;
  /** How often a folder that does not exist (yet) is looked for. */
  retryMs?: number;
}

/**
 * Live file sync (issue #14): one `fs.watch` per folder (inotify on Linux), shared by every
 * listener of that folder. `fs.watch` rather than chokidar: chokidar keeps a stat of every
 * file it watches, which for a filebase stream of a million entry files is a second copy of
 * the directory in memory and a second full scan at boot; one inotify watch per folder
 * costs the same at ten files and at a million. Events are only hints here: every listener
 * re-reads what changed and compares it with what it serves, so duplicate events, the
 * server's own writes and an editor's write-then-rename all come to the same result.
 *
 * A folder that does not exist yet (a filebase stream without entries) is looked for every
 * `retryMs` and watched once it appears; a watched folder that is removed goes back to that.
 */
export class FolderWatcher {
  private readonly folders = new Map<string, Watched>();
  private closed = false;
  private readonly debounceMs: number;
  private readonly retryMs: number;

  constructor(
    private readonly logger: Logger,
    options: FolderWatcherOptions = {},
  ) {
    this.debounceMs = options.debounceMs ?? 25;
    this.retryMs = options.retryMs ?? 500;
  }

  /** Watch `folder` (absolute); returns the function that stops this listener. */
  watch(folder: string, listener: FolderListener): () => void {
    if (this.closed) return () => undefined;
    let watched = this.folders.get(folder);
    if (!watched) {
      watched = { listeners: new Set(), pending: new Set() };
      this.folders.set(folder, watched);
      this.attach(folder, watched);
    }
    watched.listeners.add(listener);
    return () => {
      const current = this.folders.get(folder);
      if (!current) return;
      current.listeners.delete(listener);
      if (current.listeners.size === 0) this.detach(folder, current);
    };
  }

  /** Folders watched right now (for /readyz details and tests). */
  get size(): number {
    return this.folders.size;
  }

  close(): void {
    this.closed = true;
    for (const [folder, watched] of this.folders) this.detach(folder, watched);
  }

  private attach(folder: string, watched: Watched): void {
    if (this.closed || this.folders.get(folder) !== watched) return;
    try {
      // persistent: false, so a watcher never keeps a stopping process alive.
      const watcher = watch(folder, { persistent: false }, (_event, name) => this.schedule(folder, watched, name ?? undefined));
      watcher.on('error', (error) => {
        this.logger.debug({ path: folder, err: error }, 'folder watch ended; watching for it again');
        this.lost(folder, watched);
      });
      watched.watcher = watcher;
      try {
        watched.ino = statSync(folder).ino;
      } catch {
        watched.ino = undefined;
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC') {
        // Out of inotify watches: say so once per folder, keep trying (docs/file-sync.md).
        this.logger.warn({ path: folder }, 'cannot watch the folder: the inotify watch limit is reached (fs.inotify.max_user_watches); edits on disk there are seen at the next write');
      } else if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        this.logger.warn({ path: folder, err: error }, 'cannot watch the folder; edits on disk there are seen at the next write');
      }
      watched.retry = setTimeout(() => void inBackground(this.logger, `looking for the folder ${folder}`, () => this.reappear(folder, watched)), this.retryMs);
      watched.retry.unref();
    }
  }

  /** Look for a folder that was missing; once there, watch it and have it listed again. */
  private async reappear(folder: string, watched: Watched): Promise<void> {
    watched.retry = undefined;
    if (this.closed || this.folders.get(folder) !== watched) return;
    const there = await stat(folder).then((s) => s.isDirectory(), () => false);
    if (!there) {
      watched.retry = setTimeout(() => void inBackground(this.logger, `looking for the folder ${folder}`, () => this.reappear(folder, watched)), this.retryMs);
      watched.retry.unref();
      return;
    }
    this.attach(folder, watched);
    if (watched.watcher) this.schedule(folder, watched, undefined);
  }

  private lost(folder: string, watched: Watched): void {
    watched.watcher?.close();
    watched.watcher = undefined;
    if (this.closed || this.folders.get(folder) !== watched || watched.retry) return;
    // Whatever was in it is gone for now: listeners list it (empty) and it is looked for again.
    this.schedule(folder, watched, undefined);
    watched.retry = setTimeout(() => void inBackground(this.logger, `looking for the folder ${folder}`, () => this.reappear(folder, watched)), this.retryMs);
    watched.retry.unref();
  }

  private schedule(folder: string, watched: Watched, name: string | undefined): void {
    watched.pending.add(name);
    if (watched.timer) return;
    watched.timer = setTimeout(() => void inBackground(this.logger, `telling the listeners of ${folder}`, () => this.deliver(folder, watched)), this.debounceMs);
    watched.timer.unref();
  }

  private async deliver(folder: string, watched: Watched): Promise<void> {
    watched.timer = undefined;
    if (this.closed || this.folders.get(folder) !== watched) return;
    const names = watched.pending.has(undefined) ? [undefined] : [...watched.pending];
    watched.pending.clear();
    // A removed folder gives a last event and then silence: notice it and watch for its return.
    // So does one replaced by another folder renamed over it (a folder copied in: issue #27).
    if (watched.watcher && !(await stat(folder).then((s) => s.isDirectory() && (watched.ino === undefined || s.ino === watched.ino), () => false))) {
      this.lost(folder, watched);
      return;
    }
    for (const listener of [...watched.listeners]) {
      for (const name of names) {
        try {
          listener(name);
        } catch (error) {
          this.logger.error({ path: folder, err: error }, 'a folder listener failed');
        }
      }
    }
  }

  private detach(folder: string, watched: Watched): void {
    watched.watcher?.close();
    if (watched.timer) clearTimeout(watched.timer);
    if (watched.retry) clearTimeout(watched.retry);
    watched.watcher = undefined;
    watched.timer = undefined;
    watched.retry = undefined;
    this.folders.delete(folder);
  }
}
