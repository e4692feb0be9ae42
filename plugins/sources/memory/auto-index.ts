import type { StreamDefinition } from '../../streams/index.js';
import type { WhereClause } from '../contracts.js';

/**
 * Automatic hash indexes: a declared field filtered by `=`/IN/CONTAINS this many times by a
 * scan, on a stream of at least AUTO_INDEX_MIN_ENTRIES, gets one (at most AUTO_INDEX_MAX per
 * stream). Building one costs a pass over the entries (about 10 ms per 100k).
 */
const AUTO_INDEX_AFTER = 3;
const AUTO_INDEX_MIN_ENTRIES = 2000;
const AUTO_INDEX_MAX = 8;

/** The indexing heuristic of an in-memory stream: which scanned field deserves a hash index. */
export class AutoIndexer {
  /** Scans per field that an equality index would have narrowed (see AUTO_INDEX_AFTER). */
  private readonly scansByField = new Map<string, number>();
  private built = 0;

  constructor(
    private readonly definition: StreamDefinition,
    private readonly keyName: string,
  ) {}

  /**
   * A filter over `size` entries was answered by a scan: count the equality clauses on
   * declared fields without an index (`indexed`); answers the fields whose
   * AUTO_INDEX_AFTER-th scan this was, to index now.
   */
  noteScan(where: readonly WhereClause[], size: number, indexed: (field: string) => boolean): string[] {
    const build: string[] = [];
    if (this.built >= AUTO_INDEX_MAX || size < AUTO_INDEX_MIN_ENTRIES) return build;
    for (const clause of where) {
      const { field, operator } = clause;
      if (operator !== '=' && operator !== 'IN' && operator !== 'CONTAINS') continue;
      if (field === this.keyName || indexed(field) || build.includes(field) || !this.definition.fields.some((f) => f.handle === field)) continue;
      const scans = (this.scansByField.get(field) ?? 0) + 1;
      this.scansByField.set(field, scans);
      if (scans < AUTO_INDEX_AFTER) continue;
      this.scansByField.delete(field);
      build.push(field);
      if (++this.built >= AUTO_INDEX_MAX) break;
    }
    return build;
  }
}
