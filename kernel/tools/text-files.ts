import { isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** A UTF-8 byte order mark (U+FEFF) at the start of a text: editors on Windows write one. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * A file that is read but not decoded (issue #27): bytes that are not UTF-8 (`EILSEQ`) or a
 * file above `streams.files.max_bytes` (`EFBIG`). Never decoded lossily: a U+FFFD written back
 * by the next write would lose the original bytes. Callers treat it as an unreadable edit
 * (degraded in /readyz, writes refused until the file is fixed).
 */
export class UnreadableTextError extends Error {
  constructor(
    readonly code: 'EILSEQ' | 'EFBIG',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadableTextError';
  }
}

function tooLarge(size: number, maxBytes: number): UnreadableTextError {
  return new UnreadableTextError('EFBIG', `the file is ${size} bytes, above streams.files.max_bytes (${maxBytes}): skipped`);
}

/**
 * The text of `bytes`, BOM removed; UnreadableTextError when they are not valid UTF-8.
 *
 * Decoded first, checked after: the decoder replaces every invalid sequence with U+FFFD, so a
 * text without one came from valid UTF-8, and only a text holding one (a file that really
 * holds U+FFFD, or invalid bytes) is checked strictly. Checking first cost a view and a
 * validation pass per file: ~11 ms of the 100k files a boot reads (issue #33); the search
 * for U+FFFD is all but free, and none at all in a one-byte (Latin-1) string.
 */
export function decodeText(bytes: Uint8Array, start = 0, end = bytes.length): string {
  // A Buffer decodes its own range: no second view per file (~7 ms of a 100k boot on Node 20).
  const text = Buffer.isBuffer(bytes) ? bytes.toString('utf8', start, end) : Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8');
  if (text.indexOf('\ufffd') !== -1 && !isUtf8(bytes.subarray(start, end))) {
    throw new UnreadableTextError('EILSEQ', 'the file is not valid UTF-8 (its bytes are kept as they are; re-save it as UTF-8)');
  }
  return stripBom(text);
}

/**
 * A text file (UTF-8) without its byte order mark, so a definition, entry or config file
 * saved "with BOM" reads like any other instead of failing to parse. Files above `maxBytes`
 * are not read at all (their size is checked on the open descriptor first).
 */
export async function readTextFile(file: string, maxBytes = Infinity): Promise<string> {
  const handle = await open(file, 'r');
  try {
    if (maxBytes !== Infinity) {
      const { size } = await handle.stat();
      if (size > maxBytes) throw tooLarge(size, maxBytes);
    }
    return decodeText(await handle.readFile());
  } finally {
    await handle.close();
  }
}

/** The bytes of a file, unless it is above `maxBytes` (compare-before-write reads). */
export async function readFileBytes(file: string, maxBytes = Infinity): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    if (maxBytes !== Infinity) {
      const { size } = await handle.stat();
      if (size > maxBytes) throw tooLarge(size, maxBytes);
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** One buffer for readTextFileSync: files that fit are read with open, one read, close (no fstat, no allocation). */
const SMALL = Buffer.allocUnsafe(64 * 1024);

/**
 * A text file read synchronously, without its byte order mark: for loading many small files
 * at boot in time slices (filebase). A file that fills the buffer is measured and, unless it
 * is above `maxBytes` (a 200 MB file must not stall the event loop), read again whole.
 */
export function readTextFileSync(file: string, maxBytes = Infinity): string {
  const fd = openSync(file, 'r');
  let length: number;
  try {
    length = readSync(fd, SMALL, 0, SMALL.length, 0);
    if (length === SMALL.length && maxBytes !== Infinity) {
      const { size } = fstatSync(fd);
      if (size > maxBytes) throw tooLarge(size, maxBytes);
    }
  } finally {
    closeSync(fd);
  }
  if (length === SMALL.length) return decodeText(readFileSync(file));
  if (length > maxBytes) throw tooLarge(length, maxBytes);
  return decodeText(SMALL, 0, length);
}
