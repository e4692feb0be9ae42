import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolderLock, FolderLockedError, LOCK_FILE_NAME } from '../../kernel/index.js';
import { REPO, runToExit, startServer } from '../helpers/server-process.js';

/** Issue #27 item 1: one process per data folder; a second server stops before listening. */

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'one-writer-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function app(name: string): Promise<string> {
  const root = path.join(tmp, name);
  await cp(path.join(REPO, 'streams'), path.join(root, 'streams'), { recursive: true });
  await writeFile(path.join(root, 'app.json'), JSON.stringify({ log: { level: 'warn' } }));
  return path.join(root, 'app.json');
}

describe('one server per data folder', () => {
  it('a second server on the same folder (even with --fallback-port) exits non-zero before listening, naming the folder and the holder', async () => {
    const config = await app('shared');
    const first = await startServer(['--config', config, '--port', '0']);
    try {
      const port = new URL(first.url).port;
      const second = await runToExit(['--config', config, '--port', port, '--fallback-port']);
      expect(second.code).not.toBe(0);
      const lines = second.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(path.join(tmp, 'shared', 'streams'));
      expect(lines[0]).toContain(`pid ${first.child.pid}`);
      expect(lines[0]).toContain('--data DIR');
      // The first one still serves, and its lock file names it.
      expect((await request(`${first.url}/healthz`)).statusCode).toBe(200);
      const holder = JSON.parse(await readFile(path.join(tmp, 'shared', 'streams', LOCK_FILE_NAME), 'utf8')) as { pid: number };
      expect(holder.pid).toBe(first.child.pid);
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exit).toBe(0);
    // Released at exit: the next server starts.
    const again = await startServer(['--config', config, '--port', '0']);
    again.child.kill('SIGTERM');
    expect(await again.exit).toBe(0);
  });

  it('--data DIR is one folder: two servers of different apps on one --data folder refuse the second; another --data serves', async () => {
    const config = await app('data-app');
    const data = path.join(tmp, 'work-copy');
    const first = await startServer(['--config', config, '--port', '0', '--data', data]);
    try {
      const second = await runToExit(['--config', config, '--port', '0', '--data', data]);
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain(data);
      const other = await startServer(['--config', config, '--port', '0', '--data', path.join(tmp, 'other-copy')]);
      other.child.kill('SIGTERM');
      expect(await other.exit).toBe(0);
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exit).toBe(0);
  });

  it('a killed server leaves a stale lock file that the next boot takes over', async () => {
    const config = await app('crashed');
    const first = await startServer(['--config', config, '--port', '0']);
    first.child.kill('SIGKILL');
    await first.exit;
    const lockFile = path.join(tmp, 'crashed', 'streams', LOCK_FILE_NAME);
    expect(JSON.parse(await readFile(lockFile, 'utf8')).pid).toBe(first.child.pid);
    const next = await startServer(['--config', config, '--port', '0']);
    try {
      expect(JSON.parse(await readFile(lockFile, 'utf8')).pid).toBe(next.child.pid);
    } finally {
      next.child.kill('SIGTERM');
    }
    expect(await next.exit).toBe(0);
  });

  it('a live holder is never stolen: a lock file of another host, or of a running pid, refuses', async () => {
    const folder = path.join(tmp, 'foreign');
    const held = await FolderLock.acquire(folder);
    // One process, one writer: a second kernel in this process is refused too.
    await expect(FolderLock.acquire(folder)).rejects.toBeInstanceOf(FolderLockedError);
    held.release();
    await writeFile(path.join(folder, LOCK_FILE_NAME), JSON.stringify({ pid: 1, host: 'elsewhere.example', started: '2026-01-01T00:00:00Z' }));
    await expect(FolderLock.acquire(folder)).rejects.toThrow(/pid 1 on host elsewhere\.example/);
    await writeFile(path.join(folder, LOCK_FILE_NAME), JSON.stringify({ pid: process.ppid, host: os.hostname(), started: '2026-01-01T00:00:00Z' }));
    await expect(FolderLock.acquire(folder)).rejects.toThrow(new RegExp(`pid ${process.ppid}`));
  });
});
