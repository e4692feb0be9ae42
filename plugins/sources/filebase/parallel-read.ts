import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { decodeText, readTextFileSync, UnreadableTextError } from '../../../kernel/index.js';
import { FolderReads } from './folder-reads.js';

/**
 * Reading the many small files of a large filebase stream at boot. Opening, reading and
 * closing them is most of the load (about 55% of its CPU at 100k files), spent in the
 * kernel; a worker thread reading beside the event loop's thread cuts the wall time where a
 * second core is free. Files are claimed in chunks from a shared counter, so the thread that
 * is ahead reads more; the worker hands back raw bytes (one transferred buffer per chunk) and
 * the caller's thread decodes and parses them, as it would its own reads.
 */

/** Below this many files one thread reads them all (a worker costs about 30 ms to start). */
export const PARALLEL_MIN = 20_000;
const CHUNK = 256;
/**
 * Chunks the worker may have posted that the event loop has not visited yet. Without a
 * bound the worker ran far ahead at 1M files, and the bytes waiting in the queue stayed in
 * its malloc arena after the load (about 30 MB of RSS).
 */
const MAX_AHEAD = 8;

/** The files to read, by index (EntryFileList keeps integer names as numbers). */
export interface NameList {
  readonly length: number;
  nameAt(index: number): string;
}

/** One file's text, or why it could not be read. */
export type FileVisitor = (index: number, text: string | undefined, error: unknown) => void;

/** What the worker posts: a chunk's bytes with each file's end offset, and its failures. */
interface ChunkMessage {
  chunk: number;
  bytes: ArrayBuffer;
  ends: Uint32Array;
  errors: Array<[offset: number, code: string, message: string]>;
}

/**
 * Call `visit` once for every name (in no particular order) with the file's text, BOM
 * removed, or the error that kept it from being read. `pause` is awaited about every
 * `sliceMs` (the event loop runs and the worker's chunks are visited; a closing source
 * throws there: the worker is stopped and the error propagates). A worker helps from
 * `parallelMin` files on, where the machine has a second core.
 */
export async function readFiles(
  folder: string,
  names: NameList,
  visit: FileVisitor,
  pause: () => Promise<void>,
  sliceMs: number,
  parallelMin = PARALLEL_MIN,
  /** Files above it are not read (`streams.files.max_bytes`): visited with an EFBIG error. */
  maxBytes = Infinity,
): Promise<{ byWorker: number }> {
  const chunks = Math.ceil(names.length / CHUNK);
  // [0]: the next chunk to claim; [1]: the worker's chunks visited here (its flow control).
  const claims = new Int32Array(new SharedArrayBuffer(8));
  const mine = new Uint8Array(chunks);
  const helper = names.length > 0 && names.length >= parallelMin && availableParallelism() > 1 ? startReader(folder, names, claims, visit, maxBytes) : undefined;
  try {
    const reads = new FolderReads(folder, names.length);
    const slice = (prefix: string): boolean => readSlice(prefix, names, visit, maxBytes, claims, mine, sliceMs);
    while (!reads.within(slice)) await pause();
    if (helper === undefined) return { byWorker: 0 };
    const delivered = await helper.finished;
    // A worker that died (or could not start) leaves chunks it claimed unread: read them here.
    for (let chunk = 0; chunk < chunks; chunk++) {
      if (mine[chunk] === 1 || delivered.has(chunk)) continue;
      const end = Math.min(names.length, (chunk + 1) * CHUNK);
      for (let index = chunk * CHUNK; index < end; index++) readOne(folder + path.sep, names, index, visit, maxBytes);
    }
    let byWorker = 0;
    for (const chunk of delivered) byWorker += Math.min(names.length, (chunk + 1) * CHUNK) - chunk * CHUNK;
    return { byWorker };
  } finally {
    helper?.stop();
  }
}

/**
 * Claim and read chunks until none is left (true) or `sliceMs` passed (false). A synchronous
 * function of its own, because a loop inside an async function resumes unoptimized after each
 * await (issue #33), and because the working directory is the folder only while it runs
 * (`FolderReads`). `prefix`: what opens a file by its name (see `FolderReads.within`).
 */
function readSlice(prefix: string, names: NameList, visit: FileVisitor, maxBytes: number, claims: Int32Array, mine: Uint8Array, sliceMs: number): boolean {
  const started = performance.now();
  const chunks = mine.length;
  for (;;) {
    const chunk = Atomics.add(claims, 0, 1);
    if (chunk >= chunks) return true;
    mine[chunk] = 1;
    const end = Math.min(names.length, (chunk + 1) * CHUNK);
    for (let index = chunk * CHUNK; index < end; index++) readOne(prefix, names, index, visit, maxBytes);
    if (performance.now() - started > sliceMs) return false;
  }
}

function readOne(prefix: string, names: NameList, index: number, visit: FileVisitor, maxBytes: number): void {
  let text: string;
  try {
    // Joined by hand: path.join normalizes again what is already normal (about 0.2 s at 1M files).
    text = readTextFileSync(prefix + names.nameAt(index), maxBytes);
  } catch (error) {
    visit(index, undefined, error);
    return;
  }
  visit(index, text, undefined);
}

interface Reader {
  /** Resolves with the chunks the worker delivered, once it is done (or gone). */
  finished: Promise<Set<number>>;
  stop(): void;
}

function startReader(folder: string, names: NameList, claims: Int32Array, visit: FileVisitor, maxBytes: number): Reader {
  // The names go over as one shared UTF-8 buffer, one per line: no million strings cloned
  // into the worker's heap (and none kept here: each is spelled, written and dropped).
  let text = Buffer.allocUnsafeSlow(Math.max(1024, names.length * 16));
  let size = 0;
  for (let index = 0; index < names.length; index++) {
    const name = names.nameAt(index);
    if (size + name.length * 3 + 1 > text.length) {
      const grown = Buffer.allocUnsafeSlow(text.length * 2 + name.length * 3);
      text.copy(grown, 0, 0, size);
      text = grown;
    }
    size += text.write(name, size);
    text[size++] = 10;
  }
  const shared = new Uint8Array(new SharedArrayBuffer(Math.max(0, size - 1)));
  shared.set(text.subarray(0, Math.max(0, size - 1)));
  const delivered = new Set<number>();
  const worker = new Worker(READER_SOURCE, { eval: true, workerData: { folder, names: shared, claims, chunk: CHUNK, ahead: MAX_AHEAD, maxBytes } });
  worker.unref();
  worker.on('message', (message: ChunkMessage) => {
    delivered.add(message.chunk);
    const bytes = Buffer.from(message.bytes);
    const failed = new Map<number, Error>(message.errors.map(([offset, code, text]) => [offset, code === 'EFBIG' ? new UnreadableTextError('EFBIG', text) : Object.assign(new Error(text), { code })]));
    let start = 0;
    const first = message.chunk * CHUNK;
    for (let offset = 0; offset < message.ends.length; offset++) {
      const end = message.ends[offset]!;
      const error = failed.get(offset);
      if (error !== undefined) visit(first + offset, undefined, error);
      else {
        // Decoded strictly here, as a read on this thread would be (never lossily: issue #27).
        let text: string | undefined;
        let failure: unknown;
        try {
          text = decodeText(bytes, start, end);
        } catch (undecodable) {
          failure = undecodable;
        }
        visit(first + offset, text, failure);
      }
      start = end;
    }
    Atomics.add(claims, 1, 1);
    Atomics.notify(claims, 1);
  });
  const finished = new Promise<Set<number>>((resolve) => {
    worker.once('exit', () => resolve(delivered));
    worker.once('error', () => undefined);
  });
  return { finished, stop: () => void worker.terminate() };
}

/**
 * The worker, as CommonJS source (an eval worker: no file to locate next to the compiled
 * module, the same under tsc and under the test runner). It claims chunks until none is
 * left, reading each file whole into one growing buffer.
 */
const READER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync, fstatSync } = require('node:fs');
const { folder, names, claims, chunk, ahead, maxBytes } = workerData;
const counters = new Int32Array(claims.buffer);
const starts = [0];
for (let i = 0; i < names.length; i++) if (names[i] === 10) starts.push(i + 1);
const total = starts.length;
const nameAt = (index) => Buffer.from(names.buffer, starts[index], (index + 1 < total ? starts[index + 1] - 1 : names.length) - starts[index]).toString('utf8');
let bytes = Buffer.allocUnsafeSlow(256 * 1024);
let sent = 0;
for (;;) {
  const claimed = Atomics.add(counters, 0, 1);
  const first = claimed * chunk;
  if (first >= total) break;
  const last = Math.min(total, first + chunk);
  let size = 0;
  const ends = new Uint32Array(last - first);
  const errors = [];
  for (let index = first; index < last; index++) {
    const start = size;
    try {
      const fd = openSync(folder + '/' + nameAt(index), 'r');
      try {
        if (maxBytes !== Infinity) {
          const size = fstatSync(fd).size;
          if (size > maxBytes) throw Object.assign(new Error('the file is ' + size + ' bytes, above streams.files.max_bytes (' + maxBytes + '): skipped'), { code: 'EFBIG' });
        }
        for (;;) {
          if (bytes.length - size < 64 * 1024) {
            const grown = Buffer.allocUnsafeSlow(bytes.length * 2);
            bytes.copy(grown, 0, 0, size);
            bytes = grown;
          }
          const read = readSync(fd, bytes, size, bytes.length - size, null);
          if (read === 0) break;
          size += read;
        }
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      size = start;
      errors.push([index - first, String(error && error.code || ''), String(error && error.message || error)]);
    }
    ends[index - first] = size;
  }
  // Wait while the event loop's thread is behind (it visits chunks between its own slices).
  for (let seen = Atomics.load(counters, 1); sent - seen >= ahead; seen = Atomics.load(counters, 1)) Atomics.wait(counters, 1, seen, 100);
  const out = bytes.buffer.slice(0, size);
  parentPort.postMessage({ chunk: claimed, bytes: out, ends, errors }, [out, ends.buffer]);
  sent++;
}
`;
