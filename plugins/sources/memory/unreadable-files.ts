import type { Logger } from '../../../kernel/index.js';

/**
 * The files of one in-memory source holding an edit that cannot be read, with why: the last
 * good version is served meanwhile, each reason is logged once, and `/readyz` lists them
 * (`MemorySource.troubles`). The source owns it; its store marks files in it.
 */
export class UnreadableFiles {
  private readonly reasons = new Map<string, string>();

  constructor(private readonly logger: Logger) {}

  /**
   * Record a file whose edit cannot be read (logged once per reason), or with `reason`
   * undefined that it reads again. `lastGoodKept` false at load: there is no last good
   * version then, the file is simply not served.
   */
  mark(file: string, reason: string | undefined, error?: unknown, lastGoodKept = true): void {
    if (reason === undefined) {
      if (this.reasons.delete(file)) this.logger.info({ path: file }, 'the file reads again');
      return;
    }
    if (this.reasons.get(file) === reason) return;
    this.reasons.set(file, reason);
    this.logger.error({ path: file, err: error }, lastGoodKept ? `${reason}: the last good version is kept` : reason);
  }

  /** True while `file` holds an edit that cannot be read. */
  has(file: string): boolean {
    return this.reasons.has(file);
  }

  /** Why `file` cannot be read, or undefined when it can (or is not known). */
  reasonOf(file: string): string | undefined {
    return this.reasons.get(file);
  }

  /** How many files cannot be read right now (a miss checks them only when there are any). */
  get size(): number {
    return this.reasons.size;
  }

  /** Every file that cannot be read, with why. */
  list(): Array<{ path: string; reason: string }> {
    return [...this.reasons].map(([path, reason]) => ({ path, reason }));
  }
}
