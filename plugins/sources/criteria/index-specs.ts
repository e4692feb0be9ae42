import { keyNameOf, type StreamDefinition } from '../../streams/index.js';

/** One secondary index of a stream: hash (equality, IN) or sorted (ranges, order). */
export interface IndexSpec {
  field: string;
  kind: 'hash' | 'sorted';
}

/**
 * The indexes of a stream's in-memory engine: those declared in `config.indexes` (checked
 * by the definition schema and definition-check.ts) plus a hash index on every `unique`
 * field. The key needs none: the engine's key map answers `=`/IN on it.
 * `config.indexes`: ["category", {"field": "year", "type": "sorted"}] (a name alone is hash).
 */
export function indexSpecs(definition: StreamDefinition): IndexSpec[] {
  const keyName = keyNameOf(definition);
  const specs: IndexSpec[] = [];
  const seen = new Set<string>();
  const add = (field: string, kind: 'hash' | 'sorted'): void => {
    if (seen.has(`${kind}:${field}`)) return;
    seen.add(`${kind}:${field}`);
    specs.push({ field, kind });
  };
  const declared = definition.config.indexes;
  if (Array.isArray(declared)) {
    for (const item of declared) {
      if (typeof item === 'string') add(item, 'hash');
      else if (item && typeof item === 'object' && typeof (item as { field?: unknown }).field === 'string') {
        const { field, type } = item as { field: string; type?: unknown };
        add(field, type === 'sorted' ? 'sorted' : 'hash');
      }
    }
  }
  for (const field of definition.fields) {
    if (field.handle !== keyName && (field.unique || field.rules.includes('unique'))) add(field.handle, 'hash');
  }
  return specs;
}
