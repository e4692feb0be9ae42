import type { FieldDefinition } from '../../streams/index.js';
import type { FieldType, FieldTypeContext, RelationInfo, VerifyFailure } from '../contracts.js';
import { integerFromText, isRecord, uncastable } from './helpers.js';

export function relatedStreams(field: FieldDefinition): string[] {
  const related = field.config.related;
  if (typeof related === 'string') return [related];
  if (Array.isArray(related)) return related.filter((r): r is string => typeof r === 'string');
  return [];
}

function keyNameOf(field: FieldDefinition): string {
  return typeof field.config.key_name === 'string' && field.config.key_name !== '' ? field.config.key_name : 'id';
}

/** Keys of the related stream are integers when its key field is numeric (or undeclared: increment). */
function numericKeys(field: FieldDefinition, context: FieldTypeContext): boolean {
  const stream = relatedStreams(field)[0];
  const related = stream === undefined ? undefined : context.toolkit.resolveStream(stream);
  if (!related) return false;
  const keyName = keyNameOf(field);
  const keyField = related.fields.find((f) => f.handle === keyName);
  return keyField === undefined ? keyName === related.config.key_name : ['integer', 'number'].includes(keyField.type);
}

const KEY_SCHEMA = { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer' }] };
/** The most keys one `multiple` relationship may hold: each is looked up on every write and eager load. */
export const MAX_RELATED = 1000;

function normalizeKey(value: unknown, field: FieldDefinition, context: FieldTypeContext): unknown {
  // An eager-loaded related entry sent back is read as its key.
  const key = isRecord(value) && keyNameOf(field) in value ? value[keyNameOf(field)] : value;
  return numericKeys(field, context) ? integerFromText(key) : key;
}

function apiPath(stream: string, key: unknown): string {
  return `streams/${encodeURIComponent(stream)}/entries/${encodeURIComponent(String(key))}`;
}

async function existsInAny(streams: string[], keyName: string, key: unknown, context: Parameters<NonNullable<FieldType['verify']>>[2]): Promise<boolean> {
  for (const stream of streams) if (await context.lookup.exists(stream, keyName, key)) return true;
  return false;
}

export const relationshipType: FieldType = {
  name: 'relationship',
  rule: 'relationship',
  message: `The :attribute field must be the key of a related entry (at most ${MAX_RELATED} keys for a multiple relationship).`,
  configKeys: ['related', 'multiple', 'key_name', 'relation'],
  kind: (field) => (field.config.multiple === true ? 'array' : 'string'),
  schema: (field) => (field.config.multiple === true ? { type: 'array', maxItems: MAX_RELATED, items: KEY_SCHEMA } : KEY_SCHEMA),
  normalize(value, field, context) {
    if (value === '') return null;
    if (field.config.multiple === true) return Array.isArray(value) ? value.map((v) => normalizeKey(v, field, context)) : value;
    return normalizeKey(value, field, context);
  },
  castFilter(value, field, context) {
    const key = normalizeKey(value, field, context);
    if (typeof key !== 'string' && typeof key !== 'number') throw uncastable(field, value, 'an entry key');
    return key;
  },
  async verify(value, field, context): Promise<VerifyFailure[]> {
    const streams = relatedStreams(field);
    const keyName = keyNameOf(field);
    const failures: VerifyFailure[] = [];
    // No entry can match when no related stream is defined: say that, not only "invalid".
    const missing = context.lookup.hasStream === undefined ? [] : streams.filter((s) => !context.lookup.hasStream!(s));
    const message =
      missing.length > 0 && missing.length === streams.length
        ? `The selected :attribute is invalid: its related stream [${missing.join(', ')}] does not exist.`
        : 'The selected :attribute is invalid.';
    if (Array.isArray(value)) {
      const found = await Promise.all(value.map((key) => existsInAny(streams, keyName, key, context)));
      found.forEach((ok, i) => {
        if (!ok) failures.push({ rule: 'exists', message, path: String(i) });
      });
    } else if (!(await existsInAny(streams, keyName, value, context))) {
      failures.push({ rule: 'exists', message });
    }
    return failures;
  },
  relation(field): RelationInfo | undefined {
    const stream = relatedStreams(field)[0];
    if (stream === undefined) return undefined;
    const relation = typeof field.config.relation === 'string' && field.config.relation !== '' ? field.config.relation : field.handle.replace(/_id$/, '');
    return { handle: field.handle, relation, stream, keyName: keyNameOf(field), multiple: field.config.multiple === true };
  },
  link(value, field) {
    const stream = relatedStreams(field)[0];
    if (stream === undefined || Array.isArray(value) || isRecord(value)) return undefined;
    return apiPath(stream, value);
  },
  check(field) {
    const problems: string[] = [];
    const related = field.config.related;
    const ok = typeof related === 'string' ? related !== '' : Array.isArray(related) && related.length > 0 && related.every((r) => typeof r === 'string' && r !== '');
    if (!ok) problems.push(`Field [${field.handle}] of type [relationship] needs config.related (a stream id or a non-empty list of stream ids).`);
    if (field.config.multiple !== undefined && typeof field.config.multiple !== 'boolean') problems.push(`Field [${field.handle}]: config.multiple must be true or false.`);
    if (field.config.key_name !== undefined && typeof field.config.key_name !== 'string') problems.push(`Field [${field.handle}]: config.key_name must be a field handle.`);
    if (field.config.relation !== undefined && typeof field.config.relation !== 'string') problems.push(`Field [${field.handle}]: config.relation must be a string.`);
    return problems;
  },
};

/** `{"@stream": "books", "id": 4}`: an entry of any (or any listed) stream. */
export const polymorphicType: FieldType = {
  name: 'polymorphic',
  rule: 'polymorphic',
  message: 'The :attribute field must name a stream (@stream) and the key of one of its entries.',
  configKeys: ['related', 'key_name'],
  schema(field) {
    const streams = relatedStreams(field);
    const keyName = keyNameOf(field);
    return {
      type: 'object',
      required: ['@stream', keyName],
      properties: {
        '@stream': streams.length > 0 ? { enum: streams } : { type: 'string', minLength: 1 },
        [keyName]: KEY_SCHEMA,
      },
    };
  },
  normalize(value, field, context) {
    if (!isRecord(value) || typeof value['@stream'] !== 'string') return value;
    const keyName = keyNameOf(field);
    const related = context.toolkit.resolveStream(value['@stream']);
    const keyField = related?.fields.find((f) => f.handle === keyName);
    const numeric = related !== undefined && (keyField ? ['integer', 'number'].includes(keyField.type) : true);
    return numeric ? { ...value, [keyName]: integerFromText(value[keyName]) } : value;
  },
  async verify(value, field, context): Promise<VerifyFailure[]> {
    if (!isRecord(value)) return [];
    const keyName = keyNameOf(field);
    const ok = await context.lookup.exists(String(value['@stream']), keyName, value[keyName]);
    return ok ? [] : [{ rule: 'exists', message: 'The selected :attribute is invalid.' }];
  },
  link(value, field) {
    if (!isRecord(value) || typeof value['@stream'] !== 'string') return undefined;
    const key = value[keyNameOf(field)];
    return key === undefined || key === null ? undefined : apiPath(value['@stream'], key);
  },
  check(field) {
    const related = field.config.related;
    if (related === undefined) return [];
    const ok = typeof related === 'string' ? related !== '' : Array.isArray(related) && related.length > 0 && related.every((r) => typeof r === 'string');
    return ok ? [] : [`Field [${field.handle}]: config.related must be a stream id or a non-empty list of stream ids.`];
  },
};
