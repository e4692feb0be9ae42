import { open, rename, stat, unlink } from 'node:fs/promises';
import type { Logger } from '../../kernel/index.js';
import { readLines } from './segment-log.js';

/**
 * Versions before issue #26 kept the change history and the webhook outbox as one file
 * each, without a byte limit (a 614 MB history made every boot fail reading it as one
 * string). A node that finds one converts it once, reading it as a stream of lines and
 * keeping at most its byte budget, then deletes it.
 */

/** Gathers lines and writes them in large chunks (one write per MiB, not one per line). */
class LineWriter {
  private chunks: string[] = [];
  private size = 0;
  private constructor(private readonly handle: Awaited<ReturnType<typeof open>>) {}

  static async create(file: string): Promise<LineWriter> {
    return new LineWriter(await open(file, 'w', 0o644));
  }

  async line(text: string): Promise<void> {
    this.chunks.push(text, '\n');
    this.size += text.length + 1;
    if (this.size >= 1 << 20) await this.flush();
  }

  async close(): Promise<void> {
    await this.flush();
    await this.handle.sync();
    await this.handle.close();
  }

  private async flush(): Promise<void> {
    if (this.size === 0) return;
    await this.handle.write(this.chunks.join(''));
    this.chunks = [];
    this.size = 0;
  }
}

async function sizeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * `changes.jsonl` of an older version into the first segment (`target`): only its last
 * `maxBytes` (the newest changes), line by line; a cursor from before them answers 410.
 */
export async function importLegacyHistory(file: string, target: string, maxBytes: number, maxLineBytes: number, logger: Logger): Promise<void> {
  const size = await sizeOf(file);
  if (size === undefined) return;
  const start = Math.max(0, size - maxBytes);
  const temp = `${target}.tmp`;
  const out = await LineWriter.create(temp);
  let firstSeq: number | undefined;
  await readLines(
    file,
    maxLineBytes,
    logger,
    async (line) => {
      // The first line of a window cut mid-file is a piece of a line: it does not parse, and is left out.
      let record: { seq?: unknown };
      try {
        record = JSON.parse(line) as { seq?: unknown };
      } catch {
        return;
      }
      if (firstSeq === undefined && typeof record.seq === 'number') firstSeq = record.seq;
      await out.line(line);
    },
    start,
  );
  // Changes before the window are gone: cursors before its first change answer 410.
  if (start > 0 && firstSeq !== undefined) await out.line(JSON.stringify({ floor: firstSeq - 1 }));
  await out.close();
  await rename(temp, target);
  await unlink(file);
  logger.info({ path: file, bytes: size, kept_bytes: size - start }, 'converted the change history of an older version to segment files');
}

/** A record of an older outbox file: a delivery added, retried or done. */
export type LegacyOutboxRecord = { add: Record<string, unknown> & { id: string } } | { done: string } | { retry: string; attempts: number; due: number };

/**
 * `outbox.jsonl` of an older version: the deliveries still pending, each handed to `keep`
 * (its record as read, with the last retry state), oldest first. Memory holds the pending
 * deliveries' places in the file, not their bodies; the file is deleted after.
 */
export async function readLegacyOutbox(file: string, maxLineBytes: number, logger: Logger, keep: (add: Record<string, unknown>) => Promise<void>): Promise<void> {
  const size = await sizeOf(file);
  if (size === undefined) return;
  const places = new Map<string, { offset: number; length: number; attempts?: number; due?: number }>();
  await readLines(file, maxLineBytes, logger, (line, offset, length) => {
    let record: LegacyOutboxRecord;
    try {
      record = JSON.parse(line) as LegacyOutboxRecord;
    } catch {
      return;
    }
    if ('add' in record && typeof record.add?.id === 'string') places.set(record.add.id, { offset, length });
    else if ('done' in record) places.delete(record.done);
    else if ('retry' in record) {
      const place = places.get(record.retry);
      if (place) Object.assign(place, { attempts: record.attempts, due: record.due });
    }
  });
  const handle = await open(file, 'r');
  try {
    for (const place of places.values()) {
      const buffer = Buffer.allocUnsafe(place.length);
      await handle.read(buffer, 0, place.length, place.offset);
      const { add } = JSON.parse(buffer.toString('utf8')) as { add: Record<string, unknown> };
      if (place.attempts !== undefined) Object.assign(add, { attempts: place.attempts, due: place.due });
      await keep(add);
    }
  } finally {
    await handle.close();
  }
  await unlink(file);
  logger.info({ path: file, bytes: size, pending: places.size }, 'converted the webhook outbox of an older version to segment files');
}
