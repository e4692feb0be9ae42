import type { Collection, Document } from 'mongodb';
import type { Logger } from '../../kernel/index.js';
import type { FieldDefinition, StreamDefinition } from '../streams/index.js';
import { KEY_ORDER_FIELD } from './documents.js';

const NUMERIC_TYPES = new Set(['integer', 'number', 'decimal']);
const STRUCTURED_TYPES = new Set(['object', 'array', 'multiselect', 'image', 'file', 'polymorphic']);

/**
 * Which documents a unique index covers: only those holding a value of the field's
 * kind, so entries without the field (or with null) never collide with each other,
 * as the `unique` rule ignores empty values.
 */
function uniqueScope(field: FieldDefinition): Document {
  if (NUMERIC_TYPES.has(field.type)) return { [field.handle]: { $type: 'number' } };
  if (field.type === 'boolean') return { [field.handle]: { $type: 'bool' } };
  if (STRUCTURED_TYPES.has(field.type) || field.config.multiple === true) return { [field.handle]: { $exists: true } };
  return { [field.handle]: { $type: 'string' } };
}

export function uniqueIndexName(handle: string): string {
  return `unique_${handle}`;
}

/**
 * Create the indexes a stream needs, idempotently (createIndex with the same name and
 * options is a no-op on the server): key order (`_ko`, `_id`) for default lists and
 * sort tie-breaks, and one unique index per `unique` field. A unique index that cannot
 * be built (existing duplicates, a conflicting index of the same name) is logged with
 * the reason and does not stop the stream; the `unique` rule still checks on write.
 */
export async function ensureIndexes<T extends Document>(collection: Collection<T>, definition: StreamDefinition, logger: Logger): Promise<void> {
  await collection.createIndex({ [KEY_ORDER_FIELD]: 1, _id: 1 }, { name: 'key_order' });
  for (const field of definition.fields) {
    if (!field.unique || field.handle === definition.config.key_name) continue;
    const name = uniqueIndexName(field.handle);
    try {
      await collection.createIndex({ [field.handle]: 1 }, { name, unique: true, partialFilterExpression: uniqueScope(field) });
    } catch (error) {
      const code = (error as { code?: number }).code;
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
  }
}
