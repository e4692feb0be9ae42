import type { EntryLookup, FieldsService } from '../../plugins/fields/index.js';
import { coreRules } from '../../plugins/fields/rules/core-rules.js';
import { coreTypes } from '../../plugins/fields/types/core-types.js';
import { FieldsRegistry } from '../../plugins/fields/service.js';
import type { FieldDefinition, StreamDefinition } from '../../plugins/streams/index.js';
import { ValidationError } from '../../kernel/index.js';

/** A hand-built normalized definition (what the streams plugin would produce). */
interface FieldInput {
  type?: string;
  required?: boolean;
  unique?: boolean;
  protected?: boolean;
  rules?: string | string[];
  config?: Record<string, unknown>;
}

export function stream(id: string, fields: Record<string, string | FieldInput>, extra: Partial<StreamDefinition> = {}): StreamDefinition {
  const list: FieldDefinition[] = Object.entries(fields).map(([handle, f]) => {
    const body: FieldInput = typeof f === 'string' ? { type: f } : f;
    return {
      handle,
      type: body.type ?? 'string',
      required: body.required ?? false,
      unique: body.unique ?? false,
      protected: body.protected ?? false,
      // The streams plugin splits pipe strings; so does this stand-in for its normalization.
      rules: typeof body.rules === 'string' ? body.rules.split('|') : (body.rules ?? []),
      config: body.config ?? {},
    };
  });
  return {
    id,
    name: id,
    config: { key_name: 'id', source: { type: 'filebase' } },
    fields: list,
    rules: {},
    routes: [],
    extra: {},
    raw: { id },
    ...extra,
  };
}

/** In-memory entries by stream for the async checks. */
export class MemoryLookup implements EntryLookup {
  constructor(readonly data: Record<string, Array<Record<string, unknown>>> = {}) {}
  async exists(stream: string, field: string, value: unknown, exceptKey?: unknown): Promise<boolean> {
    return (this.data[stream] ?? []).some((e) => e[field] === value && (exceptKey === undefined || e.id !== exceptKey));
  }
  async max(stream: string, field: string): Promise<unknown> {
    const values = (this.data[stream] ?? []).map((e) => e[field]).filter((v): v is number => typeof v === 'number');
    return values.length === 0 ? undefined : Math.max(...values);
  }
}

export function makeService(streams: StreamDefinition[] = [], timezone = 'UTC'): FieldsRegistry {
  return makeServiceWith(new Map(streams.map((s) => [s.id, s])), timezone);
}

/** A service over a registry stand-in the test may change (a stream defined later). */
export function makeServiceWith(byId: Map<string, StreamDefinition>, timezone = 'UTC'): FieldsRegistry {
  const service = new FieldsRegistry({ timezone, resolveStream: (id) => byId.get(id) });
  for (const type of coreTypes) service.registerType(type);
  for (const rule of coreRules) service.registerRule(rule);
  return service;
}

/** The error elements of a failing prepare (fails the test when it passes). */
export async function errorsOf(service: FieldsService, definition: StreamDefinition, input: Record<string, unknown>, lookup: EntryLookup = new MemoryLookup(), mode: 'create' | 'replace' | 'patch' = 'create'): Promise<Array<{ message: string; meta?: Record<string, unknown> }>> {
  try {
    await service.prepare(definition, input, { mode, lookup });
  } catch (error) {
    if (error instanceof ValidationError) return error.errors as Array<{ message: string; meta?: Record<string, unknown> }>;
    throw error;
  }
  throw new Error(`expected a validation error for ${JSON.stringify(input)}`);
}
