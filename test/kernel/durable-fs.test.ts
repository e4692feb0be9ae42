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

const { ensureDirDurable, removeFileUnsynced, replaceFileUnsynced, writeFileDurable } = await import('../../kernel/tools/durable-fs.js');

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

describe('unflushed replace and remove (the filebase journal writes the bytes durably first)', () => {
  it('replaces a file (stamp of the new one), removes one, and says when there was none', async () => {
    const file = path.join(dir, 'entry.json');
    const first = replaceFileUnsynced(file, Buffer.from('{"v":1}'));
    const second = replaceFileUnsynced(file, Buffer.from('{"v":22}'));
    expect(await readFile(file, 'utf8')).toBe('{"v":22}');
    expect(second.ino).not.toBe(first.ino);
    expect(second.size).toBe(8);
    expect((await stat(file)).ino).toBe(second.ino);
    expect(removeFileUnsynced(file)).toBe(true);
    expect(removeFileUnsynced(file)).toBe(false);
    expect((await readdir(dir)).filter((name) => name.includes('entry'))).toEqual([]);
  });

  it('never blocks on a FIFO put where an entry file was (the old file is held open without blocking)', async () => {
    const { execFileSync } = await import('node:child_process');
    const fifo = path.join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    replaceFileUnsynced(fifo, Buffer.from('{"v":1}'));
    expect(await readFile(fifo, 'utf8')).toBe('{"v":1}');
    execFileSync('mkfifo', [path.join(dir, 'fifo2.json')]);
    expect(removeFileUnsynced(path.join(dir, 'fifo2.json'))).toBe(true);
  });

  it('replaces a link at the name with the file, leaving what the link pointed to as it was', async () => {
    const { symlinkSync, writeFileSync } = await import('node:fs');
    const target = path.join(dir, 'elsewhere.txt');
    writeFileSync(target, 'not an entry');
    const link = path.join(dir, 'linked.json');
    symlinkSync(target, link);
    replaceFileUnsynced(link, Buffer.from('{"v":1}'));
    expect(await readFile(link, 'utf8')).toBe('{"v":1}');
    expect(await readFile(target, 'utf8')).toBe('not an entry');
  });
});
