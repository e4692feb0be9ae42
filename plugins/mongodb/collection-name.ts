import { ConfigError } from '../../kernel/index.js';

/**
 * Collection names come from definitions (`config.source.table`, default the stream
 * id): no `$`, no NUL, not a `system.` collection, within MongoDB's length limit.
 */
const COLLECTION = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,119}$/;

export function collectionProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || !COLLECTION.test(name)) {
    return `"${String(name)}" is not a valid collection name (letters, digits, _ . -, at most 120 characters)`;
  }
  if (name.startsWith('system.')) return `"${name}" is a reserved MongoDB collection name`;
  return undefined;
}

export function requireCollectionName(name: unknown, where: string): string {
  const problem = collectionProblem(name);
  if (problem) throw new ConfigError(problem, where, '/config/source/table');
  return name as string;
}

/** The collection holding the `increment` counters of every stream of a database. */
export const COUNTERS_COLLECTION = 'streams_counters';
