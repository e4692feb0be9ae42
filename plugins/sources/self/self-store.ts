import { AppError, type ReplaceOptions } from '../../../kernel/index.js';
import type { Entry, SourceContext } from '../contracts.js';
import { decodeJsonEntries, encodeJsonEntries, type JsonShape } from '../file/json-codec.js';
import type { StoreHost } from '../memory/entry-store.js';
import { MemorySource } from '../memory-source.js';
import { resolveInRoot } from '../paths.js';
import { SingleFileStore } from '../single-file-store.js';

/**
 * `self`: the entries are the `data` of the definition file itself (a list, or an
 * object keyed by key). Reads come from the loaded definition; a write re-reads the
 * definition file, replaces only its `data` (same shape) and rewrites it durably.
 */
export function createSelfSource(context: SourceContext): MemorySource {
  const { definition, root } = context;
  const given = definition.config.source.file;
  const own = typeof given !== 'string' || given === '';
  const file = own ? definition.file : resolveInRoot(root, given, 'source.file', definition.id);
  return new MemorySource(definition, context.logger, (host) => new SelfStore(host, file, own ? context.definitions : undefined)).loadAfter(context.after);
}

/** The `data` of a definition file (the stream's own, or the one `source.file` names). */
export class SelfStore extends SingleFileStore {
  readonly type = 'self';
  private shape: JsonShape = 'list';

  constructor(
    host: StoreHost,
    file: string | undefined,
    /** Set when the entries live in the stream's own definition: writes go through the registry. */
    private readonly definitions?: SourceContext['definitions'],
  ) {
    super(host, file ?? '');
  }

  protected override async readText(): Promise<string | undefined> {
    // The registry already parsed the definition: no second read at load.
    return undefined;
  }

  /** Catching up with a disk edit reads the definition file itself (its `data`). */
  protected override readCurrent(): Promise<string | undefined> {
    return super.readText();
  }

  protected override loadReadsFile(): boolean {
    return false;
  }

  /** The file holds a whole definition, not just the encoded data. */
  protected override writesWholeText(): boolean {
    return false;
  }

  protected decode(text: string | undefined): Entry[] {
    const skip = (why: string): void => this.logger.warn({ path: this.file }, `skipping an entry: ${why}`);
    const data = text === undefined ? this.definition.data : dataOf(JSON.parse(text) as unknown);
    const decoded = decodeJsonEntries(data, this.definition, skip);
    this.shape = decoded.shape;
    return decoded.entries;
  }

  protected encode(entries: Entry[]): string {
    return JSON.stringify(encodeJsonEntries(entries, this.shape, this.keyName));
  }

  protected override async writeText(dataJson: string, options?: ReplaceOptions): Promise<boolean> {
    // The registry writes the same file (PUT/PATCH/DELETE of the definition): one writer,
    // one lock, so neither loses the other's change (found in review).
    if (this.definitions) {
      await this.definitions.updateData(this.definition.id, JSON.parse(dataJson) as unknown);
      return true;
    }
    if (!this.file) {
      throw new AppError(409, `Stream [${this.definition.id}] keeps its entries in its definition, which has no file to write to.`);
    }
    const current = await super.readText();
    let raw: Record<string, unknown>;
    try {
      raw = current === undefined ? { ...this.definition.raw } : (JSON.parse(current) as Record<string, unknown>);
    } catch {
      throw new AppError(409, `The definition file of stream [${this.definition.id}] cannot be parsed; its data was not written.`);
    }
    raw.data = JSON.parse(dataJson) as unknown;
    return super.writeText(`${JSON.stringify(raw, null, 2)}\n`, options);
  }
}

/** The `data` of a definition file's JSON (a file that is not an object holds none). */
function dataOf(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('the definition file is not a JSON object');
  return (raw as Record<string, unknown>).data;
}
