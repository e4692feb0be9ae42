import { AppError, type Logger } from '../../kernel/index.js';

/**
 * The realtime plugin's boot read (the change history and the webhook outbox), run after the
 * transport listens (issue #33: no per-change work before listening; a full history is up to
 * `history.max_bytes` of lines to parse). Until it is over every use of the feed waits for it:
 * a write's change is published once it is read (in the order the writes came), a change
 * request or a socket is answered once it is read, and `/readyz` details say `loading`. A read
 * that fails leaves the feed unserved (503, and `/readyz` names the error) where it used to stop
 * the boot: the entries are served all the same.
 */
export class HistoryLoad {
  /** `closed`: shut down before the read started (it never will). */
  private state: 'idle' | 'loading' | 'ready' | 'failed' | 'closed' = 'idle';
  private failure: Error | undefined;
  private finished: Promise<boolean> | undefined;

  constructor(
    private readonly read: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /**
   * Start the read (once: from `kernel.booted` once the entries' preload is over, or at the first
   * use when that comes earlier, a plugin's boot that writes an entry); resolves true once read,
   * false when the read failed or the node shut down first. Never rejects.
   */
  start(): Promise<boolean> {
    this.finished ??= this.state === 'closed' ? Promise.resolve(false) : this.run();
    return this.finished;
  }

  /**
   * Shutdown: a read not started yet never starts (the sources' preload it waits for ends
   * when they close, after this plugin's shutdown), one running is waited for.
   */
  async close(): Promise<void> {
    if (this.finished === undefined) {
      this.state = 'closed';
      this.failure = new Error('the node is shutting down');
    }
    await this.idle();
  }

  private async run(): Promise<boolean> {
    this.state = 'loading';
    const started = performance.now();
    try {
      await this.read();
      this.state = 'ready';
      this.logger.debug({ ms: Math.round(performance.now() - started) }, 'change history read');
    } catch (error) {
      this.state = 'failed';
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.logger.error({ err: error }, 'the change history or the webhook outbox could not be read: changes are not served (/readyz names the error); entries are');
    }
    return this.state === 'ready';
  }

  /** True once the read succeeded (a write's publish then goes on without waiting). */
  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Wait for the read; a 503 when it failed (a change request, a socket, a write's change). */
  async whenReady(): Promise<void> {
    if (this.state === 'ready') return;
    if (!(await this.start())) throw new AppError(503, `The change history could not be read (${this.failure?.message ?? 'unknown error'}): changes are not served until the node restarts.`);
  }

  /**
   * For `/readyz`: ready (no details, as every healthy check); while the read runs, still ready
   * with `history: "loading"` in the details (every request is answered, a change request or a
   * write's change a little later: the node can take traffic, and its `ready` line, written once
   * the entries are loaded, stays true); not ready once the read failed.
   */
  report(): { ready: boolean; details?: Record<string, unknown> } {
    if (this.state === 'ready') return { ready: true };
    if (this.state === 'closed') return { ready: false, details: { history: 'closed' } };
    if (this.state === 'failed') return { ready: false, details: { history: 'unreadable', error: this.failure?.message } };
    return { ready: true, details: { history: 'loading' } };
  }

  /** For shutdown: the read is over (a feed is never closed under it). */
  async idle(): Promise<void> {
    if (this.finished !== undefined) await this.finished;
  }
}
