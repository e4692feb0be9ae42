import type { StreamDefinition } from './types.js';

/**
 * The API form of a definition: what its author wrote (imports unexpanded), with the
 * id first and the effective name, so clients see exactly what is stored.
 */
export function definitionToJson(definition: StreamDefinition): Record<string, unknown> {
  const { id: _id, handle: _handle, name: _name, ...rest } = definition.raw;
  return { id: definition.id, name: definition.name, ...rest };
}
