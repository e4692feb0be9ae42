import { ByteBudgetMap } from '../../kernel/index.js';
import type { EntryAttributes, FieldsService } from '../fields/index.js';
import type { StreamDefinition } from '../streams/index.js';

/**
 * The serialized API form of each stored entry object, kept until the entry changes (a write
 * stores a new object, so a kept text is never stale), within a byte budget: unbounded,
 * reading every entry of 1M once held about 150 MB more, for as long as the entries lived.
 */
export class EntryJson {
  private readonly json: ByteBudgetMap<object, { definition: StreamDefinition; text: string }>;
  /** The same for callers with hidden fields (issue #28), per entry and hidden set (one set per entry kept: the last asked). */
  private readonly narrowJson: ByteBudgetMap<object, { definition: StreamDefinition; hidden: ReadonlySet<string>; text: string }>;

  /** `budgetBytes`: `streams.caches.json_bytes` (a quarter more for the narrowed forms). */
  constructor(
    budgetBytes: number,
    private readonly fields: () => FieldsService,
  ) {
    this.json = new ByteBudgetMap(budgetBytes, { name: 'entry_json' });
    this.narrowJson = new ByteBudgetMap(Math.floor(budgetBytes / 4), { name: 'entry_json_narrowed' });
  }

  /** Bytes and texts kept now of the full forms (tests; the metrics read the maps by name). */
  get bytes(): number {
    return this.json.bytes;
  }

  get size(): number {
    return this.json.size;
  }

  /** The entry's API form as JSON text, without the `hidden` fields when there are any. */
  of(stream: StreamDefinition, entry: EntryAttributes, hidden?: ReadonlySet<string>): string {
    if (hidden !== undefined && hidden.size > 0) return this.narrowed(stream, entry, hidden);
    const cached = this.json.get(entry);
    if (cached && cached.definition === stream) return cached.text;
    const text = JSON.stringify(this.fields().serialize(stream, entry));
    // Two bytes a character (V8 keeps non-Latin-1 text in two), and the record and map slot around it.
    this.json.set(entry, { definition: stream, text }, 2 * text.length + 96);
    return text;
  }

  /** The API form without the hidden fields: the same bytes for every caller with the same hidden set. */
  private narrowed(stream: StreamDefinition, entry: EntryAttributes, hidden: ReadonlySet<string>): string {
    const cached = this.narrowJson.get(entry);
    if (cached && cached.definition === stream && cached.hidden === hidden) return cached.text;
    const shown = this.fields().serialize(stream, entry);
    for (const name of hidden) delete shown[name];
    const text = JSON.stringify(shown);
    this.narrowJson.set(entry, { definition: stream, hidden, text }, 2 * text.length + 96);
    return text;
  }
}
