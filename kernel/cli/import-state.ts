import { readFile, rm } from 'node:fs/promises';
import { writeFileDurable } from '../tools/durable-fs.js';

/** How far an import got: written after every batch, so `--resume` skips what is done. */
export interface ImportState {
  /** The input it belongs to (a resume of another file is refused). */
  input: string;
  /** The last line whose write finished (every line up to it is done). */
  line: number;
  created: number;
  updated: number;
  definitions: number;
  refused: Array<{ line: number; reason: string }>;
}

export async function readState(file: string): Promise<ImportState | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as ImportState;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function saveState(file: string, state: ImportState): Promise<void> {
  await writeFileDurable(file, `${JSON.stringify(state)}\n`);
}

export async function clearState(file: string): Promise<void> {
  await rm(file, { force: true });
}
