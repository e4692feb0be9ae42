import { BadRequestError } from '../../kernel/index.js';
import type { FieldsService } from '../fields/index.js';
import { assertFieldName, normalizeOperator, normalizeWhere, type OrderClause, type WhereClause } from '../sources/index.js';
import { fieldOf, type StreamDefinition } from '../streams/index.js';
import type { RawWhere } from './criteria-builder.js';

/**
 * A caller's filter clause as a source receives it: the field name checked (a protected field
 * may not steer it), the operator normalized, plain values only, cast by the field types (the
 * operator goes along: a LIKE pattern stays a string whatever the field type).
 */
export function castClause(fields: FieldsService, definition: StreamDefinition, clause: RawWhere | WhereClause): WhereClause {
  const field = readableField(definition, assertFieldName(clause.field));
  rejectOperatorObjects(clause.value);
  const operator = normalizeOperator(clause.operator);
  return normalizeWhere(field, operator, clause.value, clause.boolean === 'or' ? 'or' : 'and', (v) =>
    v === null ? null : fields.castFilterValue(definition, field, v, operator),
  );
}

/** An access rule's clause, cast like a caller's (a rule may read a protected field: it never leaves the server). */
export function castScopeClause(fields: FieldsService, definition: StreamDefinition, clause: WhereClause): WhereClause {
  const operator = normalizeOperator(clause.operator);
  return normalizeWhere(assertFieldName(clause.field), operator, clause.value, clause.boolean === 'or' ? 'or' : 'and', (v) =>
    v === null ? null : fields.castFilterValue(definition, clause.field, v, operator),
  );
}

/** A caller's sort clause: a readable field, `asc` or `desc` in any case (else a 400). */
export function checkOrder(definition: StreamDefinition, field: unknown, direction: unknown): OrderClause {
  const dir = typeof direction === 'string' ? direction.toLowerCase() : direction;
  if (dir !== 'asc' && dir !== 'desc') throw new BadRequestError(`Sort direction must be asc or desc, got "${String(direction).slice(0, 20)}".`);
  return { field: readableField(definition, assertFieldName(field)), direction: dir };
}

/** `{ "$ne": 1 }` as a filter value would be an operator to some stores: only plain values pass. */
function rejectOperatorObjects(value: unknown): void {
  const check = (v: unknown): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      throw new BadRequestError('Filter values must be strings, numbers, booleans, null or lists of them.');
    }
  };
  if (Array.isArray(value)) value.forEach(check);
  else check(value);
}

/**
 * A protected field never leaves the server, so it may not steer a filter or a sort
 * either: `where[secret]=a%` answered yes/no would reveal it character by character.
 */
function readableField(definition: StreamDefinition, field: string): string {
  const head = field.split('.', 1)[0]!;
  if (fieldOf(definition, head)?.protected === true) {
    throw new BadRequestError(`The ${head} field is protected: it cannot be used to filter or sort.`, { field: head, rule: 'protected' });
  }
  return field;
}
