import type { Logger } from '../../kernel/index.js';
import type { CheckContext, DefinitionProblem, StreamDefinition, StreamRegistry } from '../streams/index.js';
import type { FieldsService } from './contracts.js';

/** Relationship fields whose related stream has no definition: handle and stream id. */
export function danglingRelations(definition: StreamDefinition, fields: FieldsService, registry: StreamRegistry): Array<{ handle: string; stream: string }> {
  const out: Array<{ handle: string; stream: string }> = [];
  let relations;
  try {
    relations = fields.relations(definition);
  } catch {
    return out; // A definition the fields cannot compile: the fields' own check reports why.
  }
  for (const relation of relations) {
    if (relation.stream !== definition.id && registry.get(relation.stream) === undefined) out.push({ handle: relation.handle, stream: relation.stream });
  }
  return out;
}

/**
 * Over the API a relationship to a stream that does not exist is refused (409 naming it).
 * A definition read from the store is not: definitions load in any order, and a related
 * definition deleted by hand must never stop a boot (see `warnDanglingRelations`).
 */
export function relatedStreamCheck(fields: FieldsService) {
  return (definition: StreamDefinition, registry: StreamRegistry, context: CheckContext): DefinitionProblem[] => {
    if (context.origin !== 'api') return [];
    return danglingRelations(definition, fields, registry).map(({ handle, stream }) => ({
      path: `/fields/${handle}/config/related`,
      message: `Field [${handle}] of stream [${definition.id}] relates to stream [${stream}], which does not exist. Create [${stream}] first, or correct config.related.`,
    }));
  };
}

/** Once every definition is loaded: one clear line per relationship whose stream is missing. */
export function warnDanglingRelations(fields: FieldsService, registry: StreamRegistry, logger: Logger): void {
  for (const definition of registry.list()) {
    for (const { handle, stream } of danglingRelations(definition, fields, registry)) {
      logger.error(
        { stream: definition.id, file: definition.file, path: `/fields/${handle}/config/related`, related: stream },
        `field [${handle}] relates to stream [${stream}], which does not exist: its values are served as stored, without links or eager loading`,
      );
    }
  }
}
