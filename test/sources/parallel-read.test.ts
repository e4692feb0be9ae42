import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os, { availableParallelism } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BARE_NAMES_FROM } from '../../plugins/sources/filebase/folder-reads.js';
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

  /** Read every file of `folder` on this thread alone; where each visit found the working directory, and the errors. */
  const readAlone = async (folder: string, names: string[]) => {
    const seenIn = new Set<string>();
    const errors: NodeJS.ErrnoException[] = [];
    let texts = 0;
    await readFiles(
      folder,
      listOf(names),
      (_index, text, error) => {
        seenIn.add(process.cwd());
        if (text === undefined) errors.push(error as NodeJS.ErrnoException);
        else texts++;
      },
      () => Promise.resolve(),
      0,
      Infinity,
    );
    return { seenIn, errors, texts };
  };

  it('opens each file by its bare name inside the folder, and moves the working directory back after each slice (issue #33)', async () => {
    const { folder, names } = folderWith(BARE_NAMES_FROM);
    names.push('missing.json');
    const before = process.cwd();
    const { seenIn, errors, texts } = await readAlone(folder, names);
    expect(texts).toBe(BARE_NAMES_FROM);
    // Every visit ran inside a slice, with the folder as the working directory; none after it.
    expect([...seenIn].map((dir) => realpathSync(dir))).toEqual([realpathSync(folder)]);
    expect(process.cwd()).toBe(before);
    expect(statSync('.').ino).toBe(statSync(before).ino);
    // The missing file was opened by its name alone: no path walked to it.
    expect(errors.map((error) => [error.code, error.path])).toEqual([['ENOENT', 'missing.json']]);
  });

  it('leaves the working directory alone for a small folder', async () => {
    const { folder, names } = folderWith(BARE_NAMES_FROM - 2);
    names.push('missing.json');
    const before = process.cwd();
    const { seenIn, errors, texts } = await readAlone(folder, names);
    expect(texts).toBe(BARE_NAMES_FROM - 2);
    expect([...seenIn]).toEqual([before]);
    expect(errors.map((error) => error.path)).toEqual([path.join(folder, 'missing.json')]);
  });

  it('opens files by absolute path when the working directory is not the one Node names (renamed since)', async () => {
    const { folder, names } = folderWith(BARE_NAMES_FROM);
    names.push('missing.json');
    const before = process.cwd();
    const home = mkdtempSync(path.join(os.tmpdir(), 'parallel-read-home-'));
    roots.push(home);
    process.chdir(home);
    try {
      // Node keeps the name it read (path.resolve read it at boot): after the rename
      // process.cwd() still says `home`, where nothing is now.
      expect(process.cwd()).toBe(home);
      renameSync(home, `${home}-moved`);
      roots.push(`${home}-moved`);
      expect(process.cwd()).toBe(home);
      const { seenIn, errors, texts } = await readAlone(folder, names);
      expect(texts).toBe(BARE_NAMES_FROM);
      expect([...seenIn]).toEqual([home]);
      expect(errors.map((error) => error.path)).toEqual([path.join(folder, 'missing.json')]);
      // The process still works in the directory it had, under its new name.
      expect(statSync('.').ino).toBe(statSync(`${home}-moved`).ino);
    } finally {
      process.chdir(before);
    }
  });
});
