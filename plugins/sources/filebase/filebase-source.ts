import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { AppError, isTempFile, readTextFile, type Logger } from '../../../kernel/index.js';
import type { StreamDefinition } from '../../streams/index.js';
import type { Entry, SourceCapabilities, SourceContext } from '../contracts.js';
import { DirectoryWriter } from '../directory-writer.js';
import { MemorySource } from '../memory-source.js';
import { hasKey, keyFromName } from '../key-from-name.js';
import { assertFileKey, resolveInRoot } from '../paths.js';
import { mapLimit } from '../map-limit.js';
import { CODECS, type EntryCodec } from './formats.js';
import { keyId } from '../criteria/values.js';

/** Files read at once while loading (bounded so 100k files do not exhaust descriptors). */
const READ_CONCURRENCY = 64;


/**
 * `filebase`: one file per entry, `<folder>/<key>.<ext>`. Loads every file once
 * (bounded parallel reads), skips and logs unreadable ones, removes leftover temp
 * files of interrupted writes, and writes through a group-committing DirectoryWriter.
 */
export class FilebaseSource extends MemorySource {
  readonly type = 'filebase';
  readonly capabilities: SourceCapabilities = { inMemory: true, persistent: true };
  readonly folder: string;
  private readonly codec: EntryCodec;
  private readonly writer: DirectoryWriter;
  /** Entries whose file is not `<key>.<ext>` (PHP files with a key stored inside). */
  private readonly fileNames = new Map<string, string>();
  /** Keys found in more than one file at load, with those files. */
  private readonly duplicates = new Map<string, string[]>();

  constructor(definition: StreamDefinition, logger: Logger, folder: string, format: string) {
    super(definition, logger);
    const codec = CODECS[format];
    if (!codec) throw new AppError(500, `Stream [${definition.id}]: filebase format "${format}" is not one of ${Object.keys(CODECS).join(', ')}.`);
    this.codec = codec;
    this.folder = folder;
    this.writer = new DirectoryWriter(folder);
  }

  static create(context: SourceContext): FilebaseSource {
    const { definition, config, root } = context;
    const source = definition.config.source;
    const folder =
      typeof source.path === 'string' && source.path !== ''
        ? resolveInRoot(root, source.path, 'source.path', definition.id)
        : path.join(config.streams.data_path, definition.id);
    const format = typeof source.format === 'string' ? source.format : config.streams.default_format;
    return new FilebaseSource(definition, context.logger, folder, format).loadAfter(context.after);
  }

  protected async loadAll(): Promise<Entry[]> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const wanted: string[] = [];
    for (const name of names) {
      if (isTempFile(name)) {
        // A write interrupted before its rename: the entry's previous file is intact.
        await unlink(path.join(this.folder, name)).catch(() => undefined);
        continue;
      }
      if (name.startsWith('.')) continue;
      const dot = name.lastIndexOf('.');
      if (dot <= 0 || !this.codec.extensions.includes(name.slice(dot + 1))) continue;
      wanted.push(name);
    }
    wanted.sort();
    this.fileNames.clear();
    const loaded = await mapLimit(wanted, READ_CONCURRENCY, async (name) => {
      const file = path.join(this.folder, name);
      try {
        const entry = this.codec.parse(await readTextFile(file));
        const base = name.slice(0, name.lastIndexOf('.'));
        const inside = entry[this.keyName];
        const key = hasKey(inside) ? inside : keyFromName(base, this.definition);
        if (!hasKey(inside)) entry[this.keyName] = key;
        if (String(key) !== base || name !== `${base}.${this.codec.extensions[0]}`) this.fileNames.set(String(key), name);
        return entry;
      } catch (error) {
        this.logger.warn({ path: file, err: error }, 'skipping unreadable entry file');
        return undefined;
      }
    });
    // Two files naming one key (`1.json` and `one.json` both with id 1): one is served, and a
    // write would go to one file while the next boot may read the other. Writes to such a key
    // are refused until an operator removes one of the files.
    const byKey = new Map<string, string[]>();
    loaded.forEach((entry, index) => {
      if (entry === undefined) return;
      const id = keyId(entry[this.keyName]);
      byKey.set(id, [...(byKey.get(id) ?? []), wanted[index]!]);
    });
    this.duplicates.clear();
    for (const [id, files] of byKey) {
      if (files.length < 2) continue;
      this.duplicates.set(id, files);
      this.logger.warn({ key: id, files }, 'one entry key in several files: its writes are refused until one file is removed');
    }
    return loaded.filter((e): e is Entry => e !== undefined);
  }

  /** A key stored in several files cannot be written safely (see loadAll). */
  private assertSingleFile(id: string): void {
    const files = this.duplicates.get(id);
    if (files) throw new AppError(409, `Entry [${id}] is stored in several files (${files.join(', ')}): remove all but one before writing it.`);
  }

  protected override originOf(entry: Entry): string {
    return path.join(this.folder, this.fileOf(keyId(entry[this.keyName])));
  }

  private fileOf(id: string): string {
    return this.fileNames.get(id) ?? `${id}.${this.codec.extensions[0]}`;
  }

  protected override checkNewKey(id: string): void {
    assertFileKey(id);
  }

  protected async persistPut(id: string, entry: Entry): Promise<void> {
    this.assertSingleFile(id);
    await this.writer.write(this.fileOf(id), this.codec.stringify(entry));
  }

  protected async persistDelete(id: string): Promise<void> {
    this.assertSingleFile(id);
    await this.writer.remove(this.fileOf(id));
    this.fileNames.delete(id);
  }

  protected async persistTruncate(all: Entry[]): Promise<void> {
    await Promise.all(all.map((entry) => this.writer.remove(this.fileOf(String(entry[this.keyName])))));
    this.fileNames.clear();
  }
}
