import path from 'node:path';
import { AppError } from '../../../kernel/index.js';
import type { Entry, SourceContext } from '../contracts.js';
import { isEntryKey } from '../../streams/index.js';
import type { StoreHost } from '../memory/entry-store.js';
import { MemorySource } from '../memory-source.js';
import { resolveInRoot } from '../paths.js';
import { SingleFileStore } from '../single-file-store.js';
import { decodeCsv, encodeCsv } from './csv-codec.js';
import { decodeJsonEntries, encodeJsonEntries, type JsonShape, type KeptItem } from './json-codec.js';
import { keyId } from '../criteria/values.js';

/**
 * `file`: the whole stream in one file, `config.source.file` (default
 * `<data_path>/<id>.<format>`): `json` (a list, or an object keyed by key; the shape
 * found is kept on write) or `csv` (a header row; cells holding JSON are decoded).
 */
export function createFileSource(context: SourceContext): MemorySource {
  const { definition, config, root } = context;
  const source = definition.config.source;
  const given = typeof source.format === 'string' ? source.format : undefined;
  const fromName = typeof source.file === 'string' ? path.extname(source.file).slice(1).toLowerCase() : undefined;
  const format = given ?? (fromName === 'csv' ? 'csv' : 'json');
  if (format !== 'json' && format !== 'csv') {
    throw new AppError(500, `Stream [${definition.id}]: the file source reads json or csv, not "${format}".`);
  }
  const file =
    typeof source.file === 'string' && source.file !== ''
      ? resolveInRoot(root, source.file, 'source.file', definition.id)
      : path.join(config.streams.data_path, `${definition.id}.${format}`);
  return new MemorySource(definition, context.logger, (host) => new FileStore(host, file, format)).loadAfter(context.after);
}

/** The one file of a `file` stream, in json or csv. */
export class FileStore extends SingleFileStore {
  readonly type = 'file';
  private shape: JsonShape = 'list';
  /** Items of the file that are not served entries (no key, not objects, duplicate keys): written back as they were. */
  private kept: KeptItem[] = [];

  constructor(
    host: StoreHost,
    file: string,
    private readonly format: 'json' | 'csv',
  ) {
    super(host, file);
  }

  protected decode(text: string | undefined): Entry[] {
    if (text === undefined || text.trim() === '') return [];
    const skip = (why: string): void => this.logger.warn({ path: this.file }, `skipping an entry: ${why}`);
    this.kept = [];
    if (this.format === 'csv') {
      const seen = new Set<string>();
      return decodeCsv(text).filter((entry) => {
        if (isEntryKey(entry[this.keyName]) && !seen.has(keyId(entry[this.keyName]))) {
          seen.add(keyId(entry[this.keyName]));
          return true;
        }
        if (isEntryKey(entry[this.keyName])) {
          this.kept.push({ raw: entry });
          skip(`a second row for ${this.keyName} ${String(entry[this.keyName])} (kept in the file, not served)`);
          return false;
        }
        this.kept.push({ raw: entry });
        skip(`a row has no ${this.keyName} (kept in the file, not served)`);
        return false;
      });
    }
    const decoded = decodeJsonEntries(JSON.parse(text) as unknown, this.definition, skip, this.kept);
    this.shape = decoded.shape;
    return decoded.entries;
  }

  protected encode(entries: Entry[]): string {
    if (this.format === 'csv') return encodeCsv([...entries, ...this.kept.map((k) => k.raw as Entry)], this.keyName);
    return `${JSON.stringify(encodeJsonEntries(entries, this.shape, this.keyName, this.kept), null, 2)}\n`;
  }
}
