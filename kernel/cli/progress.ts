/**
 * A one-line progress bar on stderr, only when stderr is a terminal: on a pipe or in a log
 * file the tools print nothing but their data and summary. Redrawn at most every 100 ms.
 */
export class Progress {
  private readonly enabled = process.stderr.isTTY === true;
  private last = 0;

  constructor(private readonly label: string, private total: number | undefined = undefined) {}

  update(done: number, detail = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 100) return;
    this.last = now;
    const width = 30;
    let bar = '';
    if (this.total !== undefined && this.total > 0) {
      const filled = Math.min(width, Math.round((done / this.total) * width));
      bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total}`;
    } else bar = `${done}`;
    process.stderr.write(`\r\u001b[2K${this.label} ${bar} ${detail}`.slice(0, (process.stderr.columns ?? 100) + 8));
  }

  setTotal(total: number): void {
    this.total = total;
  }

  end(): void {
    if (this.enabled) process.stderr.write('\r\u001b[2K');
  }
}
