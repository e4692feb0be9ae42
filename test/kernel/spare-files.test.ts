import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SPARE_FOLDER, SpareFiles } from '../../kernel/index.js';
import { memoryLogger } from '../helpers/logger.js';

/**
 * Spare inodes for unflushed replacements (kernel/tools/spare-files.ts, issue #33): real files
 * in a temp folder. The write journal's replay and the kill -9 suites (test/sources) cover the
 * crash side; here, what is reused and what never is.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'spare-files-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const inode = (file: string): number => statSync(file).ino;
const spareNames = (): string[] => (existsSync(path.join(dir, SPARE_FOLDER)) ? readdirSync(path.join(dir, SPARE_FOLDER)) : []);

describe('SpareFiles', () => {
  it('writes the next file into the inode the last replacement freed, and stamps it', () => {
    const spares = new SpareFiles(dir, memoryLogger().logger);
    const a = path.join(dir, 'a.json');
    writeFileSync(a, '{"v":1,"padding":"a longer first version"}');
    const first = inode(a);
    const stamp = spares.replace(a, Buffer.from('{"v":2}'));
    expect(readFileSync(a, 'utf8')).toBe('{"v":2}');
    expect(stamp).toEqual({ ino: inode(a), size: 7, mtimeMs: statSync(a).mtimeMs });
    // The first version's inode is the one spare now, and the next write goes into it (cut to its length).
    expect(spares.count).toBe(1);
    const b = path.join(dir, 'b.json');
    writeFileSync(b, '{"b":1}');
    spares.replace(b, Buffer.from('{"b":2}'));
    expect(inode(b)).toBe(first);
    expect(readFileSync(b, 'utf8')).toBe('{"b":2}');
    expect(readFileSync(a, 'utf8')).toBe('{"v":2}');
    expect(spareNames()).toHaveLength(1);
  });

  it('never writes into a file that has another name (a hard-link backup keeps its bytes)', () => {
    const spares = new SpareFiles(dir, memoryLogger().logger);
    const a = path.join(dir, 'a.json');
    const backup = path.join(dir, 'backup-a.json');
    writeFileSync(a, '{"v":1}');
    linkSync(a, backup);
    spares.replace(a, Buffer.from('{"v":2}'));
    // The kept inode is also the backup's: the next writes make a file of their own instead.
    for (let i = 0; i < 3; i++) {
      const other = path.join(dir, `o${i}.json`);
      writeFileSync(other, '{}');
      spares.replace(other, Buffer.from(`{"o":${i}}`));
      expect(readFileSync(other, 'utf8')).toBe(`{"o":${i}}`);
    }
    expect(readFileSync(backup, 'utf8')).toBe('{"v":1}');
    expect(statSync(backup).nlink).toBe(1);
    expect(readFileSync(a, 'utf8')).toBe('{"v":2}');
  });

  it('never writes through what replaced a file that was not a regular one (a link, a FIFO)', () => {
    const spares = new SpareFiles(dir, memoryLogger().logger);
    const target = path.join(dir, 'elsewhere.json');
    writeFileSync(target, '{"elsewhere":true}');
    const a = path.join(dir, 'a.json');
    symlinkSync(target, a);
    spares.replace(a, Buffer.from('{"v":2}'));
    const fifo = path.join(dir, 'f.json');
    execFileSync('mkfifo', [fifo]);
    spares.replace(fifo, Buffer.from('{"f":2}'));
    // The kept link and FIFO are skipped (never opened for writing: no block, nothing written through).
    const b = path.join(dir, 'b.json');
    writeFileSync(b, '{}');
    spares.replace(b, Buffer.from('{"b":2}'));
    spares.replace(b, Buffer.from('{"b":3}'));
    expect(readFileSync(target, 'utf8')).toBe('{"elsewhere":true}');
    expect(readFileSync(a, 'utf8')).toBe('{"v":2}');
    expect(readFileSync(fifo, 'utf8')).toBe('{"f":2}');
    expect(readFileSync(b, 'utf8')).toBe('{"b":3}');
  });

  it('creates a file that did not exist, keeping nothing', () => {
    const spares = new SpareFiles(dir, memoryLogger().logger);
    const c = path.join(dir, 'c.json');
    spares.replace(c, Buffer.from('{"c":1}'));
    expect(readFileSync(c, 'utf8')).toBe('{"c":1}');
    expect(spares.count).toBe(0);
    expect(spareNames()).toEqual([]);
  });

  it('tries no link for a create (existing false), and still replaces a file found there', () => {
    const spares = new SpareFiles(dir, memoryLogger().logger);
    const c = path.join(dir, 'c.json');
    spares.replace(c, Buffer.from('{"c":1}'), false);
    expect(readFileSync(c, 'utf8')).toBe('{"c":1}');
    // A file there all the same (made on disk meanwhile): replaced, its inode not kept as a spare.
    spares.replace(c, Buffer.from('{"c":2}'), false);
    expect(readFileSync(c, 'utf8')).toBe('{"c":2}');
    expect(spares.count).toBe(0);
    expect(spareNames()).toEqual([]);
  });

  it('switches itself off where its folder cannot be made, and still replaces', () => {
    const { logger, lines } = memoryLogger();
    writeFileSync(path.join(dir, SPARE_FOLDER), 'not a folder');
    const spares = new SpareFiles(dir, logger);
    const a = path.join(dir, 'a.json');
    writeFileSync(a, '{"v":1}');
    spares.replace(a, Buffer.from('{"v":2}'));
    spares.replace(a, Buffer.from('{"v":3}'));
    expect(readFileSync(a, 'utf8')).toBe('{"v":3}');
    expect(spares.count).toBe(0);
    expect(lines.filter((line) => String(line.msg).startsWith('spare files off'))).toHaveLength(1);
    expect(readFileSync(path.join(dir, SPARE_FOLDER), 'utf8')).toBe('not a folder');
  });

  it('clear removes what an earlier run left, and the folder', () => {
    const spares = new SpareFiles(dir, memoryLogger().logger);
    const a = path.join(dir, 'a.json');
    writeFileSync(a, '{"v":1}');
    spares.replace(a, Buffer.from('{"v":2}'));
    writeFileSync(path.join(dir, SPARE_FOLDER, 's99'), '{"left":"by a crash"}');
    spares.clear();
    expect(existsSync(path.join(dir, SPARE_FOLDER))).toBe(false);
    expect(spares.count).toBe(0);
    // Usable again afterwards.
    spares.replace(a, Buffer.from('{"v":3}'));
    expect(readFileSync(a, 'utf8')).toBe('{"v":3}');
    expect(spares.count).toBe(1);
  });
});
