import type { FieldsService } from '../fields/index.js';
import { keyNameOf, type FieldDefinition, type StreamDefinition } from '../streams/index.js';

type Schema = Record<string, unknown>;

const STRING: Schema = { type: 'string' };
const DEFAULT_DATE_FORMATS: Record<string, { php: string; format: string }> = {
  date: { php: 'Y-m-d', format: 'date' },
  datetime: { php: 'Y-m-d\\TH:i:sP', format: 'date-time' },
};

/** Values of `config.options`: the keys of a value -> label object, or the list itself. */
function optionValues(field: FieldDefinition): unknown[] | undefined {
  const options = field.config.options;
  if (Array.isArray(options)) return options.map((o) => (o !== null && typeof o === 'object' && 'value' in o ? (o as { value: unknown }).value : o));
  if (options !== null && typeof options === 'object') return Object.keys(options);
  return undefined;
}

/**
 * The core types' schemas, as the API serializes their values: the default for a type that
 * does not describe itself through `FieldType.jsonSchema`.
 */
function coreSchema(field: FieldDefinition, keyType: (stream: string) => Schema, mode: 'read' | 'write'): Schema | undefined {
  switch (field.type) {
    case 'string': case 'slug': case 'image': case 'file': case 'hash': case 'encrypted':
      return { ...STRING };
    case 'email':
      return { type: 'string', format: 'email' };
    case 'url':
      return { type: 'string', format: 'uri' };
    case 'uuid':
      return { type: 'string', format: 'uuid' };
    case 'color':
      return { type: 'string', pattern: '^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$' };
    case 'integer':
      return { type: 'integer' };
    case 'number': case 'decimal':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'date': case 'datetime': {
      // The ISO format only where the field stores the default (ISO) text; a custom PHP format is plain text.
      const known = DEFAULT_DATE_FORMATS[field.type]!;
      const format = field.config.format;
      return format === undefined || format === known.php ? { type: 'string', format: known.format } : { ...STRING };
    }
    case 'time':
      return { ...STRING };
    case 'select': case 'enum': {
      const values = optionValues(field);
      return values ? { enum: values } : {};
    }
    case 'multiselect': {
      const values = optionValues(field);
      return { type: 'array', items: values ? { enum: values } : {} };
    }
    case 'array':
      return { type: 'array' };
    case 'object':
      return { type: 'object' };
    case 'relationship': {
      const key = typeof field.config.related === 'string' ? keyType(field.config.related) : {};
      // In answers, `with=<relation>` replaces the key by the related entry.
      const value = mode === 'read' ? { anyOf: [key, { type: 'object' }] } : key;
      return field.config.multiple === true ? { type: 'array', items: value } : value;
    }
    case 'polymorphic':
      return { type: 'object', properties: { '@stream': { type: 'string' } }, required: ['@stream'] };
    default:
      return undefined;
  }
}

/** `max:n`-style rules that map onto JSON Schema keywords, by the value's kind. */
function ruleKeywords(field: FieldDefinition, base: Schema): Schema {
  const out: Schema = {};
  const kind = base.type === 'integer' || base.type === 'number' ? 'number' : base.type === 'array' ? 'array' : base.type === 'string' ? 'string' : undefined;
  if (kind === undefined) return out;
  const words = { number: ['minimum', 'maximum'], string: ['minLength', 'maxLength'], array: ['minItems', 'maxItems'] }[kind];
  for (const rule of field.rules) {
    const colon = rule.indexOf(':');
    const name = colon === -1 ? rule : rule.slice(0, colon);
    const args = colon === -1 ? [] : rule.slice(colon + 1).split(',');
    const n = Number(args[0]);
    const m = Number(args[1]);
    if (name === 'min' && Number.isFinite(n)) out[words[0]!] = n;
    else if (name === 'max' && Number.isFinite(n)) out[words[1]!] = n;
    else if (name === 'size' && Number.isFinite(n)) Object.assign(out, { [words[0]!]: n, [words[1]!]: n });
    else if (name === 'between' && Number.isFinite(n) && Number.isFinite(m)) Object.assign(out, { [words[0]!]: n, [words[1]!]: m });
  }
  // Length and item counts are integers in JSON Schema; a decimal bound cannot map there.
  for (const key of Object.keys(out)) if (kind !== 'number' && !Number.isInteger(out[key])) delete out[key];
  return out;
}

export interface StreamSchemas {
  /** An entry as the API answers it (protected fields absent). */
  read: Schema;
  /** A create/PUT body (required fields required). */
  write: Schema;
  /** A PATCH body (nothing required). */
  patch: Schema;
  /** The key's schema, for the `{key}` path parameter. */
  key: Schema;
}

/** The three schemas of a stream's entries, from its fields (null allowed where a value is not required). */
export function streamSchemas(definition: StreamDefinition, fields: FieldsService, keyType: (stream: string) => Schema): StreamSchemas {
  const read: Record<string, Schema> = {};
  const write: Record<string, Schema> = {};
  const required: string[] = [];
  const keyName = keyNameOf(definition);
  let key: Schema = { type: ['integer', 'string'] };
  const valueOf = (field: FieldDefinition, mode: 'read' | 'write'): Schema => {
    const base = fields.getType(field.type)?.jsonSchema?.(field) ?? coreSchema(field, keyType, mode) ?? {};
    const schema: Schema = { ...base, ...ruleKeywords(field, base) };
    if (field.description) schema.description = field.description;
    if (field.required) return schema;
    // Not required: null is a value too.
    if ('type' in schema) return { ...schema, type: [schema.type, 'null'].flat() };
    if ('anyOf' in schema) return { ...schema, anyOf: [...(schema.anyOf as Schema[]), { type: 'null' }] };
    return schema;
  };
  // What every answer carries: the key, required fields and fields with a default (filled in
  // when a create leaves them out), so a generated client types `book.title` as `string`.
  const always: string[] = [keyName];
  for (const field of definition.fields) {
    const defaulted = field.config?.default !== undefined;
    if (field.handle === keyName) key = fields.getType(field.type)?.jsonSchema?.(field) ?? coreSchema(field, keyType, 'write') ?? {};
    // A create must send a required field, unless the server fills it in (the key, a default).
    if (field.required && field.handle !== keyName && !defaulted) required.push(field.handle);
    write[field.handle] = valueOf(field, 'write');
    if (field.protected) continue;
    read[field.handle] = valueOf(field, 'read');
    if (field.handle !== keyName && (field.required || defaulted)) always.push(field.handle);
  }
  // Streams keep undeclared attributes: the schemas stay open.
  return {
    read: { type: 'object', properties: read, required: always },
    write: { type: 'object', properties: write, ...(required.length > 0 ? { required } : {}) },
    patch: { type: 'object', properties: write },
    key,
  };
}
