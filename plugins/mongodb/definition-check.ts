import { ConfigError } from '../../kernel/index.js';
import type { DefinitionProblem, StreamDefinition } from '../streams/index.js';
import { collectionProblem } from './collection-name.js';
import type { MongoConnections } from './connections.js';
import { RESERVED_FIELDS } from './documents.js';
import { holdsMany, uniqueFields } from './indexes.js';

/**
 * Settings of a `database` stream checked when its definition is loaded or written, so
 * a bad definition is refused (boot error naming the file, or 409 on the API) instead
 * of failing at its first request.
 */
export function checkDatabaseSource(definition: StreamDefinition, connections: MongoConnections): DefinitionProblem[] {
  const source = definition.config.source;
  if (source?.type !== 'database') return [];
  const problems: DefinitionProblem[] = [];
  const table = source.table ?? definition.id;
  const tableProblem = collectionProblem(table);
  if (tableProblem) problems.push({ path: '/config/source/table', message: tableProblem });
  const connection = source.connection ?? 'default';
  if (typeof connection !== 'string') {
    problems.push({ path: '/config/source/connection', message: 'must be a connection name' });
  } else {
    try {
      connections.settings(connection);
    } catch (error) {
      const message = error instanceof ConfigError ? error.message.replace(/^.*?: /, '') : String(error);
      problems.push({ path: '/config/source/connection', message });
    }
  }
  definition.fields.forEach((field, index) => {
    if (RESERVED_FIELDS.has(field.handle) && field.handle !== definition.config.key_name) {
      problems.push({ path: `/fields/${index}`, message: `the field "${field.handle}" is reserved by the database source` });
    }
  });
  for (const field of uniqueFields(definition)) {
    if (!holdsMany(field)) continue;
    const index = definition.fields.indexOf(field);
    problems.push({
      path: `/fields/${index}`,
      message: `the field "${field.handle}" holds several values (${field.type}${field.config.multiple === true ? ', multiple' : ''}): a database stream cannot keep such values unique across nodes; remove "unique"`,
    });
  }
  return problems;
}
