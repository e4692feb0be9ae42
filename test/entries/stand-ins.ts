/**
 * Stand-ins for the two services the entries layer calls but does not own, so its
 * own logic is tested on real sources and real files while those plugins evolve:
 * a definitions map with the StreamRegistry lookups, and a FieldsService that casts
 * like the real one for the few types used here (integer, boolean, string, relationship).
 */
import { BadRequestError, NotFoundError, ValidationError } from '../../kernel/index.js';
import type { EntryAttributes, FieldsService, PrepareOptions, RelationInfo } from '../../plugins/fields/index.js';
import type { StreamDefinition, StreamRegistry } from '../../plugins/streams/index.js';

export function definitionsRegistry(definitions: StreamDefinition[]): StreamRegistry {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const unsupported = (): never => {
    throw new Error('not used by these tests');
  };
  return {
    metaId: 'core.streams',
    has: (id) => byId.has(id),
    get: (id) => byId.get(id),
    require: (id) => {
      const d = byId.get(id);
      if (!d) throw new NotFoundError(`Stream [${id}] not found.`);
      return d;
    },
    list: () => [...byId.values()],
    build: unsupported,
    create: unsupported,
    replace: unsupported,
    merge: unsupported,
    remove: unsupported,
    dependentsOf: () => ({ children: [], relations: [] }),
    updateData: unsupported,
    addCheck: () => undefined,
    registerStore: () => undefined,
    reload: unsupported,
    troubles: () => ({ degraded: [], unserved: [] }),
  };
}

export function stubFields(): FieldsService & { prepared: PrepareOptions[] } {
  const prepared: PrepareOptions[] = [];
  const typeOf = (stream: StreamDefinition, handle: string): string | undefined => stream.fields.find((f) => f.handle === handle)?.type;
  return {
    prepared,
    registerType: () => undefined,
    getType: () => undefined,
    registerRule: () => undefined,
    async prepare(stream, input, options) {
      prepared.push(options);
      const out: EntryAttributes = {};
      for (const [k, v] of Object.entries(input)) {
        if (typeOf(stream, k) === 'integer' && v !== null && v !== undefined) {
          const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
          if (typeof n !== 'number') throw new ValidationError([{ message: `The ${k} must be an integer.`, meta: { field: k, rule: 'integer' } }]);
          out[k] = n;
        } else out[k] = v;
      }
      for (const field of stream.fields) {
        if (field.unique && out[field.handle] !== undefined) {
          if (await options.lookup.exists(stream.id, field.handle, out[field.handle], options.key)) {
            throw new ValidationError([{ message: `The ${field.handle} has already been taken.`, meta: { field: field.handle, rule: 'unique' } }]);
          }
        }
      }
      return out;
    },
    serialize(stream, entry) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(entry)) if (!stream.fields.find((f) => f.handle === k)?.protected) out[k] = v;
      return out;
    },
    links: () => ({}),
    check: () => [],
    revive: (_stream, entry) => ({ entry, problems: [] }),
    castFilterValue(stream, field, value, operator) {
      const type = typeOf(stream, field);
      if (operator === 'LIKE' || operator === 'NOT LIKE') return String(value);
      if (type === 'integer' && typeof value === 'string') {
        if (!/^-?\d+$/.test(value)) throw new BadRequestError(`where[${field}] must be an integer.`);
        return Number(value);
      }
      if (type === 'boolean' && typeof value === 'string') return ['true', '1', 'yes', 'on'].includes(value.toLowerCase());
      return value;
    },
    relations(stream): RelationInfo[] {
      return stream.fields
        .filter((f) => f.type === 'relationship')
        .map((f) => ({
          handle: f.handle,
          relation: (f.config.relation as string | undefined) ?? f.handle.replace(/_id$/, ''),
          stream: f.config.related as string,
          keyName: (f.config.key_name as string | undefined) ?? 'id',
          multiple: f.config.multiple === true,
        }));
    },
  };
}
