import type { StreamDefinition } from '../../plugins/streams/index.js';

/**
 * Streams ordered so that every stream comes after the ones it relates to and the one it
 * `extends`: an import then creates a related stream and its entries before the entries
 * that point at them (a relationship to a missing entry is refused). A cycle of
 * relations keeps the given order for the streams in it.
 */
export function relatedFirst(definitions: StreamDefinition[], relatedOf: (definition: StreamDefinition) => string[]): StreamDefinition[] {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const ordered: StreamDefinition[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (definition: StreamDefinition): void => {
    if (state.has(definition.id)) return;
    state.set(definition.id, 'visiting');
    const needs = [...relatedOf(definition), ...(definition.extends ? [definition.extends] : [])];
    for (const id of needs) {
      const needed = byId.get(id);
      if (needed !== undefined && id !== definition.id) visit(needed);
    }
    state.set(definition.id, 'done');
    ordered.push(definition);
  };
  for (const definition of definitions) visit(definition);
  return ordered;
}
