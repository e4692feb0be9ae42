import { createHash } from 'node:crypto';

/**
 * A stable text of a JSON value: object keys sorted at every depth, so two stores that
 * keep the same entry with its keys in another order (MongoDB documents, YAML files) give
 * the same digest. What `streams migrate` compares per stream, with the count.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of the entries' canonical texts in the order given (the caller sorts by key). */
export class EntryDigest {
  private readonly hash = createHash('sha256');
  count = 0;

  add(entry: unknown): void {
    this.hash.update(canonicalJson(entry));
    this.hash.update('\n');
    this.count++;
  }

  hex(): string {
    return this.hash.digest('hex');
  }
}
