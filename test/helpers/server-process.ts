/**
 * Spawn the real launcher, `node kernel/boot.js --config <file> --port 0 [...]`, and wait
 * for its url line. Used by the suites that must test the built product as an operator
 * runs it (dist/, ESM load order, signals, exit codes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BOOT = path.join(REPO, 'kernel', 'boot.js');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Resolves with the exit code. */
  exit: Promise<number | null>;
}

/** Start the launcher with `args`; rejects (and kills the process) when no url line comes within 15 s. */
export function startServer(args: string[], cwd = REPO, launcher = BOOT): Promise<ServerProcess> {
  const child = spawn(process.execPath, [launcher, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a server running behind a failed test.
      child.kill('SIGKILL');
      reject(new Error(`no url line within 15 s; stdout: ${out} stderr: ${err}`));
    }, 15_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, stdout: () => out, exit });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening; stderr: ${err}`));
    });
  });
}

/** Run the launcher to completion (for boot failures): exit code and stderr. */
export function runToExit(args: string[], cwd = REPO): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BOOT, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}
