import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';

/**
 * One process per data folder (issue #27): two servers writing one folder lose acknowledged
 * writes (each serves its own memory and allocates the same new keys). SQLite and
 * PostgreSQL lock their data directory for the same reason.
 *
 * Two locks, both taken before anything listens:
 * - On Linux, an abstract unix socket named after the folder's real path: exclusive, and
 *   released by the OS when the process dies however it dies (no stale state at all). It
 *   covers every process of this machine (same network namespace).
 * - Everywhere, the lock file `<folder>/.streams-kernel.lock` with pid, host and start time:
 *   it names the holder in the refusal, and it is what a server on another machine (a
 *   shared or network folder) sees. A lock file is stale only when its host is this one and
 *   its pid is not running; a lock file of another host is never taken (its pid cannot be
 *   checked from here), so a live lock is never stolen. Node has no flock(2); `proper-lockfile`
 *   judges staleness by an mtime refreshed on a timer, which a long event-loop stall (or a
 *   suspended VM) lets another process steal: not a rule that "cannot steal a live lock".
 */

export const LOCK_FILE_NAME = '.streams-kernel.lock';

/** What a lock file says about the process that holds the folder. */
export interface LockHolder {
  pid: number;
  host: string;
  started: string;
  token?: string;
}

/** The folder is held by another live process: the boot stops before listening (a ConfigError: one line, no stack). */
export class FolderLockedError extends ConfigError {
  constructor(
    readonly folder: string,
    readonly holder: LockHolder | undefined,
  ) {
    const who = holder ? `server pid ${holder.pid} on host ${holder.host}, started ${holder.started}` : 'another server (its lock file is being written)';
    super(`the data folder ${folder} is in use by ${who}`);
    this.name = 'FolderLockedError';
  }
}

/** Folders held by this process (a second kernel in one process is a second writer too). */
const heldHere = new Set<string>();

function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return undefined;
    return { pid: parsed.pid, host: parsed.host, started: String(parsed.started ?? '?'), token: parsed.token };
  } catch {
    return undefined;
  }
}

/** Bind the abstract socket of a folder (Linux only); undefined where abstract sockets do not exist. */
function bindSocket(real: string): Promise<Server | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  const name = `\0streams-kernel-lock:${createHash('sha256').update(real).digest('hex').slice(0, 40)}`;
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? reject(error) : resolve(undefined)));
    server.listen({ path: name, exclusive: true }, () => {
      // Never keeps a stopping process alive.
      server.unref();
      resolve(server);
    });
  });
}

export class FolderLock {
  private released = false;

  private constructor(
    readonly folder: string,
    readonly file: string,
    private readonly token: string,
    private readonly socket: Server | undefined,
  ) {}

  /**
   * Take `folder` (created when missing) for this process, or throw FolderLockedError naming
   * the holder. Released by `release()`, by the OS at exit (socket), or judged stale later.
   */
  static async acquire(folder: string): Promise<FolderLock> {
    mkdirSync(folder, { recursive: true });
    const real = realpathSync(folder);
    const file = path.join(real, LOCK_FILE_NAME);
    if (heldHere.has(real)) throw new FolderLockedError(real, readHolder(file));
    let socket: Server | undefined;
    try {
      socket = await bindSocket(real);
    } catch {
      throw new FolderLockedError(real, readHolder(file));
    }
    const token = randomBytes(8).toString('hex');
    const holder: LockHolder = { pid: process.pid, host: hostname(), started: new Date().toISOString(), token };
    const text = `${JSON.stringify(holder)}\n`;
    try {
      const created = createExclusive(file, text);
      if (created === undefined) {
        // A read-only folder (served as it is): nothing here can write it, the socket is the lock.
        heldHere.add(real);
        return new FolderLock(real, file, token, socket);
      }
      if (!created) {
        const current = readHolder(file);
        if (current !== undefined && !isStale(current, socket !== undefined)) throw new FolderLockedError(real, current);
        // Stale (or unreadable: a crash while writing it): replaced in one rename.
        const temp = path.join(real, `.${LOCK_FILE_NAME}.${token}.tmp`);
        writeWhole(temp, text, 'w');
        renameSync(temp, file);
        // Without the socket (not Linux) two processes could both judge it stale: the later rename wins.
        if (readHolder(file)?.token !== token) throw new FolderLockedError(real, readHolder(file));
      }
    } catch (error) {
      socket?.close();
      throw error;
    }
    heldHere.add(real);
    return new FolderLock(real, file, token, socket);
  }

  /** Give the folder back (the lock file is removed only while it is still ours). */
  release(): void {
    if (this.released) return;
    this.released = true;
    heldHere.delete(this.folder);
    if (readHolder(this.file)?.token === this.token) {
      try {
        unlinkSync(this.file);
      } catch {
        // Already gone: nothing to give back.
      }
    }
    this.socket?.close();
  }
}

/**
 * A lock file nobody holds: written on this host by a process that no longer runs. With the
 * socket held, no other process of this host holds the folder, so a lock file naming this
 * very pid (a restarted container reusing pid 1) is stale too.
 */
function isStale(holder: LockHolder, socketHeld: boolean): boolean {
  if (holder.host !== hostname()) return false;
  if (holder.pid === process.pid) return socketHeld;
  return !pidRunning(holder.pid);
}

/** True: created; false: a lock file exists; undefined: the folder cannot be written at all. */
function createExclusive(file: string, text: string): boolean | undefined {
  try {
    writeWhole(file, text, 'wx');
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return undefined;
    throw error;
  }
}

function writeWhole(file: string, text: string, flags: 'w' | 'wx'): void {
  const fd = openSync(file, flags, 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
