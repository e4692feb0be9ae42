import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os, { availableParallelism } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFiles, type NameList } from '../../plugins/sources/filebase/parallel-read.js';

const listOf = (names: string[]): NameList => ({ length: names.length, nameAt: (index) => names[index]! });

/**
 * Boot reads of a large filebase folder (issue #16): the event loop's thread and a worker
 * claim chunks of files from one counter. Here the worker is asked for from the first file
 * (parallelMin 0), over chunk boundaries, with files it cannot read.
 */
describe('readFiles (filebase boot reads, with a worker thread)', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  const folderWith = (count: number): { folder: string; names: string[] } => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'parallel-read-'));
    roots.push(folder);
    const names: string[] = [];
    for (let i = 1; i <= count; i++) {
      const name = `${i}.json`;
      // Every 97th file starts with a byte order mark; every 500th is large (over the 64 KiB buffer).
      const body = JSON.stringify({ id: i, text: i % 500 === 0 ? 'x'.repeat(200_000) : `entry ${i} é` });
      writeFileSync(path.join(folder, name), i % 97 === 0 ? `\uFEFF${body}` : body);
      names.push(name);
    }
    return { folder, names };
  };

  for (const parallelMin of [0, Infinity]) {
    it(`visits every file once with its text, and reports the unreadable ones (${parallelMin === 0 ? 'with' : 'without'} the worker)`, async () => {
      const { folder, names } = folderWith(2_000);
      // A directory where a file was expected, and a name that is not there.
      mkdirSync(path.join(folder, 'dir.json'));
      names.push('dir.json', 'missing.json');
      const texts = new Map<number, string>();
      const errors = new Map<number, NodeJS.ErrnoException>();
      let visits = 0;
      let pauses = 0;
      const { byWorker } = await readFiles(
        folder,
        listOf(names),
        (index, text, error) => {
          visits++;
          if (text === undefined) errors.set(index, error as NodeJS.ErrnoException);
          else texts.set(index, text);
        },
        async () => {
          pauses++;
          // Slow pauses: the worker surely claims chunks of its own meanwhile.
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
        0,
        parallelMin,
      );
      expect(visits).toBe(names.length);
      expect(texts.size).toBe(2_000);
      expect(pauses).toBeGreaterThan(0);
      // The worker only helps where there is a second core.
      if (parallelMin === 0 && availableParallelism() > 1) expect(byWorker).toBeGreaterThan(0);
      else expect(byWorker).toBe(0);
      for (let i = 1; i <= 2_000; i++) {
        const parsed = JSON.parse(texts.get(i - 1)!) as { id: number; text: string };
        expect(parsed.id).toBe(i);
        expect(parsed.text).toBe(i % 500 === 0 ? 'x'.repeat(200_000) : `entry ${i} é`);
      }
      expect(errors.get(2_000)?.code).toBe('EISDIR');
      expect(errors.get(2_001)?.code).toBe('ENOENT');
    });
  }

  it('stops the worker and rethrows when the pause throws (a source closed during its load)', async () => {
    const { folder, names } = folderWith(3_000);
    const closed = new Error('closed');
    await expect(readFiles(folder, listOf(names), () => undefined, () => Promise.reject(closed), 0, 0)).rejects.toBe(closed);
  });
});
