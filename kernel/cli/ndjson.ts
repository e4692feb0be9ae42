import { createReadStream } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * The export format, one JSON object a line (NDJSON):
 *   {"kind":"definition","stream":"books","data":{...the definition...}}   (with --definitions, first)
 *   {"kind":"entry","stream":"books","data":{...the stored entry...}}
 * Lines of one stream follow each other in key order, so two exports of the same data are
 * byte-identical and diff well.
 */
export interface ExportLine {
  kind: 'definition' | 'entry';
  stream: string;
  data: Record<string, unknown>;
}

/** Lines of a file or of stdin (`-`), numbered from 1, read as they come (never the whole file at once). */
export async function* readLines(file: string): AsyncGenerator<{ number: number; text: string }> {
  const input = file === '-' ? process.stdin : createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let number = 0;
  for await (const text of lines) {
    number++;
    if (text.trim() !== '') yield { number, text };
  }
}

/**
 * Where an export goes: stdout (`-`), or a file written next to its place and renamed over
 * it once complete and synced, so an interrupted export never leaves a truncated backup.
 * Writes are gathered into 64 KiB chunks; stdout's backpressure is honoured.
 */
export class LineSink {
  private buffer: string[] = [];
  private size = 0;
  private handle: FileHandle | undefined;
  private readonly temp: string | undefined;

  private constructor(private readonly target: string) {
    this.temp = target === '-' ? undefined : path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  }

  static async open(target: string): Promise<LineSink> {
    const sink = new LineSink(target);
    if (sink.temp !== undefined) sink.handle = await open(sink.temp, 'w');
    return sink;
  }

  async write(line: string): Promise<void> {
    this.buffer.push(line, '\n');
    this.size += line.length + 1;
    if (this.size >= 65536) await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.size === 0) return;
    const chunk = this.buffer.join('');
    this.buffer = [];
    this.size = 0;
    if (this.handle !== undefined) await this.handle.write(chunk);
    else if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.handle === undefined || this.temp === undefined) return;
    await this.handle.sync();
    await this.handle.close();
    await rename(this.temp, this.target);
  }

  /** Give up: the partial file is removed, an existing backup at the target is left as it was. */
  async abort(): Promise<void> {
    if (this.handle === undefined || this.temp === undefined) return;
    await this.handle.close().catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}
