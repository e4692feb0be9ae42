import { BadRequestError } from '../../kernel/index.js';
import type { FieldsService, RelationInfo } from '../fields/index.js';
import { keyId, type Entry, type EntryKey, type Source, type WhereClause } from '../sources/index.js';
import { keyNameOf, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import type { ReadScope, Viewer } from './contracts.js';

/** What eager loading reads: field types, definitions, sources, and the access-rule test. */
export interface RelationContext {
  fields(): FieldsService;
  streams(): StreamRegistry;
  source(definition: StreamDefinition): Source;
  satisfies(definition: StreamDefinition, where: readonly WhereClause[] | undefined, entry: Record<string, unknown>): boolean;
}

/** A filter, sort or relation on a field the caller's rules hide is a 400 (its value would show). */
export function assertVisible(scope: ReadScope, field: string): void {
  const head = field.split('.', 1)[0]!;
  if (scope.hidden.has(head)) throw new BadRequestError(`The ${head} field is hidden: it cannot be used to filter, sort or load relations.`, { field: head, rule: 'hidden' });
}

/** Attach related entries, one batched lookup per relation (never one per entry). */
export async function eagerLoad(context: RelationContext, definition: StreamDefinition, entries: Entry[], names: string[], viewer?: Viewer, scope?: ReadScope): Promise<Entry[]> {
  const fields = context.fields();
  const available = fields.relations(definition);
  const wanted: RelationInfo[] = [];
  // Names are checked even when nothing matched: an unknown relation is a 400 either way.
  for (const name of new Set(names)) {
    const relation = available.find((r) => r.relation === name || r.handle === name);
    if (!relation) throw new BadRequestError(`Unknown relation "${String(name).slice(0, 40)}" for stream [${definition.id}].`, { rule: 'with' });
    // A hidden relationship field is not the caller's to follow (its value would show).
    if (scope !== undefined) assertVisible(scope, relation.handle);
    wanted.push(relation);
  }
  if (entries.length === 0) return entries;
  const out = entries.map((e) => ({ ...e }));
  for (const relation of wanted) {
    const related = context.streams().get(relation.stream);
    if (!related) continue;
    // Only related entries the caller may view are embedded (issue #28); none when it may view none.
    const relatedScope = viewer === undefined ? undefined : viewer(related, 'view');
    const keys = new Set<EntryKey>();
    for (const entry of entries) {
      const value = entry[relation.handle];
      for (const k of Array.isArray(value) ? value : [value]) if (typeof k === 'string' || typeof k === 'number') keys.add(k);
    }
    const source = context.source(related);
    const relatedKeyName = keyNameOf(related);
    const found =
      keys.size === 0
        ? []
        : relation.keyName === relatedKeyName
          ? await source.getMany([...keys])
          : await source.query({ where: [{ boolean: 'and', field: relation.keyName, operator: 'IN', value: [...keys] }], orderBy: [] });
    const byKey = new Map<string, Record<string, unknown>>();
    for (const item of found) {
      if (relatedScope === null || (relatedScope !== undefined && !context.satisfies(related, relatedScope.where, item))) continue;
      const shown = fields.serialize(related, item);
      if (relatedScope !== undefined) for (const hidden of relatedScope.hidden) delete shown[hidden];
      byKey.set(keyId(item[relation.keyName]), shown);
    }
    for (const entry of out) {
      const value = entry[relation.handle];
      entry[relation.relation] = Array.isArray(value)
        ? value.map((k) => byKey.get(keyId(k))).filter((x) => x !== undefined)
        : value === undefined || value === null
          ? null
          : (byKey.get(keyId(value)) ?? null);
    }
  }
  return out;
}
