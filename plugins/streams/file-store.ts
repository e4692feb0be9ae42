import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import {
  AppError,
  ConfigError,
  decodeText,
  isTempFile,
  readFileBytes,
  removeFileDurable,
  UnreadableTextError,
  ValidationError,
  writeFileDurable,
  type FileRoots,
} from '../../kernel/index.js';
import type { DefinitionStore, StoredState } from './contracts.js';

/** Locate a JSON syntax error as line:column for the operator. */
function jsonErrorAt(text: string, error: Error): string {
  const match = /position (\d+)/.exec(error.message);
  if (!match) return error.message;
  const offset = Number(match[1]);
  const before = text.slice(0, offset).split('\n');
  return `${error.message} (line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

/** What a definition file holds: a JSON object, or why it cannot be used. */
function parseDefinition(bytes: Buffer): { raw: Record<string, unknown> } | { reason: string } {
  let text: string;
  try {
    text = decodeText(bytes);
  } catch (error) {
    return { reason: (error as Error).message };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { reason: `is not valid JSON: ${jsonErrorAt(text, error as Error)}` };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { reason: 'a stream definition must be a JSON object' };
  return { raw: raw as Record<string, unknown> };
}

export interface FileStoreLimits {
  /** `streams.files.max_bytes`: a larger definition file is reported and skipped. */
  maxBytes?: number;
  /** The application's roots: a definition file linked from outside them is not loaded. */
  roots?: FileRoots;
}

/**
 * The default definition store: `<streams.path>/*.json` (non-recursive). A file keeps
 * its name when rewritten, even if its `id` differs from the file name.
 *
 * Never clobbered (issue #27): the store remembers the bytes of each file as it last read or
 * wrote them; every write first compares the file with them (`state`), and the new file
 * replaces the old one only while it still holds those bytes. An edit that cannot be read
 * refuses the write with a 409 naming the file, which stays byte-identical.
 */
export class FileDefinitionStore implements DefinitionStore {
  private readonly files = new Map<string, string>();
  /** The bytes of each file as last read or written (absent: never read; null: known missing). */
  private readonly seen = new Map<string, Buffer | null>();
  private readonly maxBytes: number;
  private readonly roots: FileRoots | undefined;

  constructor(
    private readonly folder: string,
    limits: FileStoreLimits = {},
  ) {
    this.maxBytes = limits.maxBytes ?? Infinity;
    this.roots = limits.roots;
  }

  /**
   * Every definition file. At boot a file that is not a JSON object fails the boot naming
   * it; live sync passes `onInvalid` instead, so a bad edit skips that file (its last good
   * version stays served) and the others still load. A file above `max_bytes`, or linked
   * from outside the roots, is skipped (reported) either way.
   */
  async loadAll(onInvalid?: (file: string, reason: string) => void, onSkipped?: (file: string, reason: string) => void): Promise<Array<{ raw: Record<string, unknown>; file?: string; id?: string }>> {
    let names: string[];
    try {
      if (this.roots?.check(this.folder) !== undefined) return [];
      names = await readdir(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new ConfigError(`cannot read the streams folder (${(error as NodeJS.ErrnoException).code})`, this.folder);
    }
    const out: Array<{ raw: Record<string, unknown>; file: string; id: string }> = [];
    for (const name of names.sort()) {
      if (!name.endsWith('.json') || isTempFile(name)) continue;
      const file = path.join(this.folder, name);
      if ((await this.roots?.checkAsync(file)) !== undefined) continue;
      let bytes: Buffer;
      try {
        bytes = await readFileBytes(file, this.maxBytes);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Removed between the listing and the read (live sync): it is simply gone.
        if (code === 'ENOENT' && onInvalid) continue;
        if (error instanceof UnreadableTextError) {
          // Too large: reported and skipped, at boot too (a huge file is not a definition).
          if (onInvalid) onInvalid(file, error.message);
          else onSkipped?.(file, error.message);
          continue;
        }
        throw error;
      }
      const parsed = parseDefinition(bytes);
      if ('reason' in parsed) {
        if (onInvalid) {
          onInvalid(file, parsed.reason);
          continue;
        }
        throw new ConfigError(parsed.reason, file, parsed.reason.startsWith('a stream') ? '/' : undefined);
      }
      const record = parsed.raw;
      const id =
        typeof record.id === 'string' ? record.id : typeof record.handle === 'string' ? record.handle : name.slice(0, -'.json'.length);
      this.files.set(id, file);
      this.seen.set(file, bytes);
      out.push({ raw: record, file, id });
    }
    return out;
  }

  /** The folder of the definition files (live sync watches it). */
  get path(): string {
    return this.folder;
  }

  fileOf(id: string): string {
    return this.files.get(id) ?? path.join(this.folder, `${id}.json`);
  }

  /**
   * The definition's file compared with what this store last read or wrote: unchanged,
   * missing, or changed on disk (its content, now remembered). A file that cannot be used
   * (not UTF-8, not JSON, too large, linked from outside) answers 409 naming it.
   */
  async state(id: string): Promise<StoredState> {
    const file = this.fileOf(id);
    this.assertInRoots(file);
    let bytes: Buffer;
    try {
      bytes = await readFileBytes(file, this.maxBytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.seen.set(file, null);
        return { state: 'missing' };
      }
      throw this.unreadable(file, error instanceof UnreadableTextError ? error.message : `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    const seen = this.seen.get(file);
    if (seen && seen.equals(bytes)) return { state: 'unchanged' };
    const parsed = parseDefinition(bytes);
    if ('reason' in parsed) throw this.unreadable(file, parsed.reason);
    this.seen.set(file, bytes);
    return { state: 'changed', raw: parsed.raw };
  }

  async save(id: string, raw: Record<string, unknown>): Promise<string> {
    const file = this.fileOf(id);
    // `x.json` may hold another stream (its own `id` wins over the file name): never overwrite it.
    for (const [other, at] of this.files) {
      if (at === file && other !== id) {
        throw new ValidationError([{ message: `The file ${path.basename(file)} holds stream [${other}]; choose another id for this stream.`, meta: { field: 'id', rule: 'unique' } }]);
      }
    }
    this.assertInRoots(file);
    // Compared with the file as last read (the registry caught up with it just before): an
    // edit that landed since makes this write fail rather than replace it.
    if (!this.seen.has(file)) await this.state(id);
    const expected = this.seen.get(file) ?? null;
    const text = `${JSON.stringify(raw, null, 2)}\n`;
    const replaced = await writeFileDurable(file, text, { unchanged: () => sameBytes(file, expected) });
    if (!replaced) throw new AppError(409, `The definition file ${this.named(file)} was edited on disk during this write; it was kept as edited. Send the write again.`);
    this.files.set(id, file);
    this.seen.set(file, Buffer.from(text));
    return file;
  }

  async remove(id: string): Promise<boolean> {
    const file = this.fileOf(id);
    // An edit that cannot be read is not deleted blind either.
    await this.state(id);
    this.files.delete(id);
    this.seen.delete(file);
    return removeFileDurable(file);
  }

  private assertInRoots(file: string): void {
    const outside = this.roots?.check(file);
    if (outside !== undefined) throw new AppError(409, `The definition file ${this.named(file)} is not read nor written: ${outside}.`);
  }

  private unreadable(file: string, reason: string): AppError {
    return new AppError(409, `The definition file ${this.named(file)} was edited on disk and cannot be read (${reason}); it is kept as it is: fix it before writing.`);
  }

  /** The file as `<definitions folder>/<name>` (never an absolute path in an answer). */
  private named(file: string): string {
    return `${path.basename(this.folder)}/${path.basename(file)}`;
  }
}

/** Whether `file` still holds `expected` (null: still missing). Synchronous: it guards a rename. */
function sameBytes(file: string, expected: Buffer | null): boolean {
  let now: Buffer;
  try {
    now = readFileSync(file);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' && expected === null;
  }
  return expected !== null && expected.equals(now);
}
