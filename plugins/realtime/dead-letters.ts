import { appendFile, rename, stat } from 'node:fs/promises';
import type { Logger } from '../../kernel/index.js';
import { readLines } from './segment-log.js';

/**
 * Webhook deliveries given up (too many attempts, too old, or pushed out of a full outbox),
 * one JSON line each, with the body, for an operator to inspect or replay by hand. Bounded
 * by bytes: past its budget the file becomes `<name>.1` (replacing the one before), so the
 * dead letters never take more than twice the budget.
 */
export class DeadLetters {
  private bytes = 0;
  /** Dead letters in the file now (counted at boot, then as they come). */
  private count = 0;
  private last: string | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly budget: number,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    try {
      this.bytes = (await stat(this.file)).size;
    } catch {
      return;
    }
    await readLines(this.file, this.budget, this.logger, () => {
      this.count++;
    });
  }

  add(letter: Record<string, unknown>): Promise<void> {
    const line = `${JSON.stringify({ ...letter, dead_at: new Date().toISOString() })}\n`;
    this.chain = this.chain.then(async () => {
      try {
        if (this.bytes > 0 && this.bytes + line.length > this.budget) {
          await rename(this.file, `${this.file}.1`);
          this.bytes = 0;
          this.count = 0;
        }
        await appendFile(this.file, line);
        this.bytes += Buffer.byteLength(line);
        this.count++;
        this.last = letter.id as string;
      } catch (error) {
        this.logger.error({ err: error, path: this.file }, 'a dead letter could not be written');
      }
    });
    return this.chain;
  }

  /** For /readyz: how many dead letters wait in the file (none: undefined). */
  report(): { count: number; file: string; last?: string } | undefined {
    if (this.count === 0) return undefined;
    return this.last === undefined ? { count: this.count, file: this.file } : { count: this.count, file: this.file, last: this.last };
  }

  async close(): Promise<void> {
    await this.chain;
  }
}
