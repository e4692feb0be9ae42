import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** Folders opened read-only are the ones fsynced (durable-fs opens a folder only to sync it). */
const synced: string[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    open: (file: string, flags: string, ...rest: unknown[]) => {
      if (flags === 'r') synced.push(file);
      return (real.open as (...args: unknown[]) => void)(file, flags, ...rest);
    },
  };
});

const { ensureDirDurable, writeFileDurable } = await import('../../kernel/tools/durable-fs.js');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'durable-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('durable files', () => {
  it('fsyncs the parent of every folder it creates, and nothing when the folder exists', async () => {
    synced.length = 0;
    const deep = path.join(dir, 'a', 'b', 'c');
    await ensureDirDurable(deep);
    expect((await stat(deep)).isDirectory()).toBe(true);
    expect(synced.sort()).toEqual([dir, path.join(dir, 'a'), path.join(dir, 'a', 'b')].sort());
    synced.length = 0;
    await ensureDirDurable(deep);
    expect(synced).toEqual([]);
  });

  it('writes a file into a new folder: complete content, no temp file left, folder and parent synced', async () => {
    synced.length = 0;
    const file = path.join(dir, 'new', 'entry.json');
    await writeFileDurable(file, '{"id":1}\n');
    expect(await readFile(file, 'utf8')).toBe('{"id":1}\n');
    expect(await readdir(path.join(dir, 'new'))).toEqual(['entry.json']);
    expect(synced).toEqual([dir, path.join(dir, 'new')]);
  });
});
