import path from 'node:path';
import { AppError } from '../errors.js';

/**
 * What a failed write to the data folder means to a client: a 503 with `Retry-After`
 * naming the cause (disk full, read-only...), never a generic 500 nor an absolute path.
 * Until a write succeeds again the storage counts as failing, so `/readyz` can take the
 * node out of a load balancer meanwhile.
 *
 * The state is per kernel (issue #30): each kernel registers a `StorageHealth` for the
 * folders it writes (its application root and `--data` folder) and a durable write counts
 * against the health whose folder holds the file, so two kernels in one process (tests,
 * embedding) never see each other's faults.
 */

const CAUSES: Record<string, string> = {
  ENOSPC: 'the data folder is full (no space left on the device)',
  EDQUOT: 'the data folder is over its disk quota',
  EROFS: 'the data folder is on a read-only file system',
  EACCES: 'the data folder cannot be written (permission denied)',
  EPERM: 'the data folder cannot be written (operation not permitted)',
  EIO: 'the data folder failed to write (I/O error)',
};

/** Seconds a client is asked to wait before retrying a write. */
export const STORAGE_RETRY_AFTER = 30;

export class StorageHealth {
  private failing: { cause: string; since: number } | undefined;
  private faultCount = 0;
  private injected: string | undefined;

  constructor(readonly folders: readonly string[] = []) {}

  /** The storage state for `/readyz`: undefined when writes succeed. */
  failure(): { cause: string; since: number } | undefined {
    return this.failing;
  }

  /** Writes refused for a storage fault since this kernel started (`streams_storage_faults_total`). */
  faults(): number {
    return this.faultCount;
  }

  /** A write succeeded: the storage is fine again. */
  written(): void {
    this.failing = undefined;
  }

  /** Turn a file-system error of a write into the 503 clients get (other errors are returned unchanged). */
  error(error: unknown): unknown {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const cause = code === undefined ? undefined : CAUSES[code];
    if (cause === undefined) return error;
    this.failing = { cause, since: Date.now() };
    this.faultCount++;
    const fault = new AppError(503, `The write was not stored: ${cause}. Retry later.`);
    fault.headers = [['Retry-After', String(STORAGE_RETRY_AFTER)]];
    return fault;
  }

  /** Tests only: make the next writes under this kernel's folders fail with this errno code (undefined stops it). */
  inject(code: string | undefined): void {
    this.injected = code;
  }

  checkInjected(): void {
    const code = this.injected ?? injectedEverywhere;
    if (code !== undefined) throw Object.assign(new Error(`injected ${code}`), { code });
  }
}

/** Writes outside every registered kernel's folders (a tool, a unit test) count here. */
const outside = new StorageHealth();
const registered = new Set<StorageHealth>();
let injectedEverywhere: string | undefined;

/** A kernel's health for its folders, counted from now on; `release` it when the kernel stops. */
export function registerStorageHealth(folders: string[]): { health: StorageHealth; release(): void } {
  const health = new StorageHealth(folders.map((folder) => path.resolve(folder)));
  registered.add(health);
  return { health, release: () => void registered.delete(health) };
}

/** The health a write of `file` counts against: the registered kernel whose folder holds it most closely. */
export function storageHealthOf(file: string): StorageHealth {
  const absolute = path.resolve(file);
  let best: StorageHealth = outside;
  let depth = -1;
  for (const health of registered) {
    for (const folder of health.folders) {
      if ((absolute === folder || absolute.startsWith(folder + path.sep)) && folder.length > depth) {
        best = health;
        depth = folder.length;
      }
    }
  }
  return best;
}

/** Tests only: make the next writes of every kernel in this process fail with this errno code (undefined stops it). */
export function injectStorageFault(code: string | undefined): void {
  injectedEverywhere = code;
}
