import { AppError } from './errors.js';

/**
 * What a failed write to the data folder means to a client: a 503 with `Retry-After`
 * naming the cause (disk full, read-only...), never a generic 500 nor an absolute path.
 * Until a write succeeds again the storage counts as failing, so `/readyz` can take the
 * node out of a load balancer meanwhile.
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

let failing: { cause: string; since: number } | undefined;
/** Writes refused for a storage fault since the process started (`streams_storage_faults_total`). */
let faults = 0;

export function storageFaults(): number {
  return faults;
}
let injected: string | undefined;

/** The storage state for `/readyz`: undefined when writes succeed. */
export function storageFailure(): { cause: string; since: number } | undefined {
  return failing;
}

/** A write of the data folder succeeded: the storage is fine again. */
export function storageWritten(): void {
  failing = undefined;
}

/** Turn a file-system error of a write into the 503 clients get (other errors are returned unchanged). */
export function storageError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const cause = code === undefined ? undefined : CAUSES[code];
  if (cause === undefined) return error;
  failing = { cause, since: Date.now() };
  faults++;
  const fault = new AppError(503, `The write was not stored: ${cause}. Retry later.`);
  fault.headers = [['Retry-After', String(STORAGE_RETRY_AFTER)]];
  return fault;
}

/** Tests only: make the next writes fail with this errno code (undefined stops it). */
export function injectStorageFault(code: string | undefined): void {
  injected = code;
}

/** Throws the injected fault, if any (called first by every durable write). */
export function checkInjectedFault(): void {
  if (injected !== undefined) throw Object.assign(new Error(`injected ${injected}`), { code: injected });
}
