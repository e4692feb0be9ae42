import type { Collection, Document } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import { NUMERIC_FIELD_TYPES, type FieldDefinition, type StreamDefinition } from '../streams/index.js';
import { KEY_ORDER_FIELD } from './documents.js';

const STRUCTURED_TYPES = new Set(['object', 'array', 'multiselect', 'image', 'file', 'polymorphic']);

/**
 * Which documents a unique index covers: only those holding a value of the field's
 * kind, so entries without the field (or with null) never collide with each other,
 * as the `unique` rule ignores empty values.
 */
function uniqueScope(field: FieldDefinition): Document {
  if (NUMERIC_FIELD_TYPES.has(field.type)) return { [field.handle]: { $type: 'number' } };
  if (field.type === 'boolean') return { [field.handle]: { $type: 'bool' } };
  return { [field.handle]: { $type: 'string' } };
}

/**
 * A `unique` rule that is about this stream's own field: `unique` or `unique:<this
 * stream>` (and `unique:<this stream>,<this field>`), in the field's rules or the
 * stream's `rules`. `unique:other,col` checks another stream and makes no index here.
 */
function uniqueRuleHere(rule: string, definition: StreamDefinition, handle: string): boolean {
  const text = rule.trim();
  if (text === 'unique') return true;
  if (!text.startsWith('unique:')) return false;
  const [stream = '', column = ''] = text.slice('unique:'.length).split(',').map((a) => a.trim());
  return (stream === '' || stream === definition.id) && (column === '' || column === handle);
}

/** The fields whose values must be unique in this stream (`unique: true` or a `unique` rule), key excluded. */
export function uniqueFields(definition: StreamDefinition): FieldDefinition[] {
  return definition.fields.filter((field) => {
    if (field.handle === definition.config.key_name) return false;
    const rules = [...field.rules, ...(definition.rules[field.handle] ?? [])];
    return field.unique || rules.some((r) => typeof r === 'string' && uniqueRuleHere(r, definition, field.handle));
  });
}

/**
 * A unique index over an array is multikey on the server (unique per element, across
 * documents), which is not what the `unique` rule checks: refused at definition time.
 */
export function holdsMany(field: FieldDefinition): boolean {
  return STRUCTURED_TYPES.has(field.type) || field.config.multiple === true;
}

export function uniqueIndexName(handle: string): string {
  return `unique_${handle}`;
}

/**
 * Create the indexes a stream needs, idempotently (createIndex with the same name and
 * options is a no-op on the server): key order (`_ko`, `_id`) for default lists and
 * sort tie-breaks, and one unique index per field with `unique: true` or a `unique` rule
 * (the index, not the rule's read-then-write check, is what holds across nodes). A unique index that cannot
 * be built (existing duplicates, a conflicting index of the same name) is logged with
 * the reason and does not stop the stream; the `unique` rule still checks on write.
 */
export async function ensureIndexes<T extends Document>(
  collection: Collection<T>,
  definition: StreamDefinition,
  logger: Logger,
  progress: (done: number) => void = () => undefined,
  /** Told of each unique index that failed on stored duplicates (`duplicate`: one such value), or built. */
  uniqueOutcome: (field: string, index: string, failure: { duplicate: unknown; reason: string } | undefined) => void = () => undefined,
): Promise<void> {
  let done = 0;
  await collection.createIndex({ [KEY_ORDER_FIELD]: 1, _id: 1 }, { name: 'key_order' });
  progress(++done);
  for (const field of uniqueFields(definition)) {
    const name = uniqueIndexName(field.handle);
    try {
      await collection.createIndex({ [field.handle]: 1 }, { name, unique: true, partialFilterExpression: uniqueScope(field) });
      uniqueOutcome(field.handle, name, undefined);
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === 11000) {
        const keyValue = (error as { keyValue?: Record<string, unknown> }).keyValue;
        uniqueOutcome(field.handle, name, { duplicate: keyValue ? keyValue[field.handle] : undefined, reason: 'duplicate values are stored; remove them and restart' });
      }
      // 11000: duplicates already stored; 85/86: an index of this name with other options.
      if (code === 11000 || code === 85 || code === 86) {
        logger.error(
          { index: name, code, err: { message: (error as Error).message } },
          `cannot create the unique index ${name} on ${collection.collectionName}: ${code === 11000 ? 'duplicate values are stored; remove them and restart' : 'an index of that name exists with other options; drop it and restart'}`,
        );
        continue;
      }
      throw error;
    }
    progress(++done);
  }
}

/** How many indexes `ensureIndexes` builds for a stream (progress total). */
export function indexCount(definition: StreamDefinition): number {
  return 1 + uniqueFields(definition).length;
}
