import path from 'node:path';
import { AppError, type Logger } from '../../../kernel/index.js';
import type { Entry, SourceCapabilities, SourceContext } from '../contracts.js';
import { isEntryKey, type StreamDefinition } from '../../streams/index.js';
import { resolveInRoot } from '../paths.js';
import { SingleFileSource } from '../single-file-source.js';
import { decodeCsv, encodeCsv } from './csv-codec.js';
import { decodeJsonEntries, encodeJsonEntries, type JsonShape, type KeptItem } from './json-codec.js';
import { keyId } from '../criteria/values.js';

/**
 * `file`: the whole stream in one file, `config.source.file` (default
 * `<data_path>/<id>.<format>`): `json` (a list, or an object keyed by key; the shape
 * found is kept on write) or `csv` (a header row; cells holding JSON are decoded).
 */
export class FileSource extends SingleFileSource {
  readonly type = 'file';
  readonly capabilities: SourceCapabilities = { inMemory: true, persistent: true };
  private shape: JsonShape = 'list';
  /** Items of the file that are not served entries (no key, not objects, duplicate keys): written back as they were. */
  private kept: KeptItem[] = [];

  constructor(
    definition: StreamDefinition,
    logger: Logger,
    file: string,
    private readonly format: 'json' | 'csv',
  ) {
    super(definition, logger, file);
  }

  static create(context: SourceContext): FileSource {
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
    return new FileSource(definition, context.logger, file, format).loadAfter(context.after);
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
