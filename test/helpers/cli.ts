/**
 * Run the `streams` command as an operator does: `node kernel/streams.js <args>` (the
 * package's bin), from the built dist/. `runCli` waits for the exit; `serveCli` waits for
 * the url line of `streams serve`.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO } from './server-process.js';

export const STREAMS_BIN = path.join(REPO, 'kernel', 'streams.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { input?: string; cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [STREAMS_BIN, ...args], { cwd: options.cwd ?? REPO, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
