import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, isTempFile, readTextFile, removeFileDurable, ValidationError, writeFileDurable } from '../../kernel/index.js';
import type { DefinitionStore } from './contracts.js';

/** Locate a JSON syntax error as line:column for the operator. */
function jsonErrorAt(text: string, error: Error): string {
  const match = /position (\d+)/.exec(error.message);
  if (!match) return error.message;
  const offset = Number(match[1]);
  const before = text.slice(0, offset).split('\n');
  return `${error.message} (line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

/**
 * The default definition store: `<streams.path>/*.json` (non-recursive). A file keeps
 * its name when rewritten, even if its `id` differs from the file name.
 */
export class FileDefinitionStore implements DefinitionStore {
  private readonly files = new Map<string, string>();

  constructor(private readonly folder: string) {}

  /**
   * Every definition file. At boot a file that is not a JSON object fails the boot naming
   * it; live sync passes `onInvalid` instead, so a bad edit skips that file (its last good
   * version stays served) and the others still load.
   */
  async loadAll(onInvalid?: (file: string, reason: string) => void): Promise<Array<{ raw: Record<string, unknown>; file?: string; id?: string }>> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new ConfigError(`cannot read the streams folder (${(error as NodeJS.ErrnoException).code})`, this.folder);
    }
    const out: Array<{ raw: Record<string, unknown>; file: string; id: string }> = [];
    for (const name of names.sort()) {
      if (!name.endsWith('.json') || isTempFile(name)) continue;
      const file = path.join(this.folder, name);
      let text: string;
      try {
        text = await readTextFile(file);
      } catch (error) {
        // Removed between the listing and the read (live sync): it is simply gone.
        if (onInvalid && (error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (error) {
        const reason = `is not valid JSON: ${jsonErrorAt(text, error as Error)}`;
        if (onInvalid) {
          onInvalid(file, reason);
          continue;
        }
        throw new ConfigError(reason, file);
      }
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
        if (onInvalid) {
          onInvalid(file, 'a stream definition must be a JSON object');
          continue;
        }
        throw new ConfigError('a stream definition must be a JSON object', file, '/');
      }
      const record = raw as Record<string, unknown>;
      const id =
        typeof record.id === 'string' ? record.id : typeof record.handle === 'string' ? record.handle : name.slice(0, -'.json'.length);
      this.files.set(id, file);
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

  async save(id: string, raw: Record<string, unknown>): Promise<string> {
    const file = this.fileOf(id);
    // `x.json` may hold another stream (its own `id` wins over the file name): never overwrite it.
    for (const [other, at] of this.files) {
      if (at === file && other !== id) {
        throw new ValidationError([{ message: `The file ${path.basename(file)} holds stream [${other}]; choose another id for this stream.`, meta: { field: 'id', rule: 'unique' } }]);
      }
    }
    await writeFileDurable(file, `${JSON.stringify(raw, null, 2)}\n`);
    this.files.set(id, file);
    return file;
  }

  async remove(id: string): Promise<boolean> {
    const file = this.fileOf(id);
    this.files.delete(id);
    return removeFileDurable(file);
  }
}
