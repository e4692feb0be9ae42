import type { FieldDefinition, StreamDefinition } from '../../streams/index.js';
import type { FieldType, FieldTypeContext, NestedShape } from '../contracts.js';
import { settle } from '../settle.js';
import { isRecord, plainDefault } from './helpers.js';

/** What an array's items are checked against: nothing, item definitions, or another stream's shape. */
interface ItemPlan {
  defs: FieldDefinition[];
  shape?: NestedShape;
}

function itemPlan(field: FieldDefinition, context: FieldTypeContext): ItemPlan {
  if (field.config.enforce_items === false) return { defs: [] };
  if (field.config.stream !== undefined) {
    // A stream not (yet) known is no shape: definitions load in any order, and the plan is
    // rebuilt as soon as the named stream appears in the registry.
    const shape = context.toolkit.stream(field.config.stream);
    return shape ? { defs: [], shape } : { defs: [] };
  }
  if (field.config.items !== undefined) return { defs: context.toolkit.fields(field.config.items) };
  return { defs: [] };
}

/** Apply `step` to each item with the definition it matches (first that does). */
function eachItem(
  value: unknown,
  plan: ItemPlan,
  context: FieldTypeContext,
  step: (def: FieldDefinition, item: unknown) => unknown,
  shapeStep: (shape: NestedShape, item: unknown) => unknown,
  pick: 'normalize' | 'matches',
): unknown {
  if (!Array.isArray(value)) return value;
  if (plan.shape) return settleList(value.map((item) => shapeStep(plan.shape!, item)));
  if (plan.defs.length === 0) return value;
  if (plan.defs.length === 1) return settleList(value.map((item) => step(plan.defs[0]!, item)));
  return settleList(
    value.map((item) => {
      for (const def of plan.defs) {
        const candidate = pick === 'normalize' ? context.toolkit.normalize(def, item) : item;
        if (context.toolkit.matches(def, candidate)) return pick === 'normalize' ? candidate : step(def, item);
      }
      return item;
    }),
  );
}

function settleList(values: unknown[]): unknown {
  const settled = settle(values);
  return settled instanceof Promise ? settled.then((v) => v) : settled;
}

export const arrayType: FieldType = {
  name: 'array',
  rule: 'array',
  message: 'The :attribute field must be an array.',
  configKeys: ['items', 'stream', 'enforce_items', 'wrapper', 'related'],
  kind: () => 'array',
  schema(field, context) {
    const plan = itemPlan(field, context);
    if (plan.shape) return { type: 'array', items: plan.shape.schema };
    if (plan.defs.length === 1) return { type: 'array', items: context.toolkit.schema(plan.defs[0]!) };
    if (plan.defs.length > 1) {
      // Several kinds of item: each item must match one of them (one message, not one per branch).
      return {
        type: 'array',
        items: {
          ...context.toolkit.predicate((item) => plan.defs.some((def) => context.toolkit.matches(def, item))),
          'x-rule': 'array',
          'x-message': 'The :attribute field must be one of the allowed kinds of item.',
        },
      };
    }
    return { type: 'array' };
  },
  normalize(value, field, context) {
    const plan = itemPlan(field, context);
    return eachItem(value, plan, context, (def, item) => context.toolkit.normalize(def, item), (shape, item) => shape.normalize(item), 'normalize');
  },
  cast(value, field, context) {
    const plan = itemPlan(field, context);
    return eachItem(value, plan, context, (def, item) => context.toolkit.cast(def, item), (shape, item) => shape.cast(item), 'matches');
  },
  serialize(value, field, context) {
    const plan = itemPlan(field, context);
    return eachItem(value, plan, context, (def, item) => context.toolkit.serialize(def, item), (shape, item) => shape.serialize(item), 'matches');
  },
  defaultValue: (field) => plainDefault(field.config.default),
  castFilter(value, field, context) {
    // A filter on an array names one item (CONTAINS): cast it as an item when items have one kind.
    const plan = itemPlan(field, context);
    return plan.defs.length === 1 ? context.toolkit.normalize(plan.defs[0]!, value) : value;
  },
  check(field) {
    const problems: string[] = [];
    const { items, stream, enforce_items: enforce } = field.config;
    if (items !== undefined && !Array.isArray(items) && !isRecord(items)) problems.push(`Field [${field.handle}]: config.items must be a list or an object of field definitions.`);
    if (stream !== undefined && typeof stream !== 'string' && !isRecord(stream)) problems.push(`Field [${field.handle}]: config.stream must be a stream id or an inline stream definition.`);
    if (enforce !== undefined && typeof enforce !== 'boolean') problems.push(`Field [${field.handle}]: config.enforce_items must be true or false.`);
    return problems;
  },
};

interface AllowedPlan {
  shapes: NestedShape[];
  /** A `generic` or `prototype` entry: a PHP class the kernel cannot check, so any object is allowed. */
  open: boolean;
}

function allowedPlan(field: FieldDefinition, context: FieldTypeContext): AllowedPlan | undefined {
  const allowed = field.config.allowed;
  if (!Array.isArray(allowed) || allowed.length === 0) return undefined;
  const plan: AllowedPlan = { shapes: [], open: false };
  for (const entry of allowed) {
    if (!isRecord(entry)) continue;
    if (entry.stream !== undefined) {
      const shape = context.toolkit.stream(entry.stream);
      // Unknown (not yet loaded) stream: any object until it appears (the plan is then rebuilt).
      if (shape) plan.shapes.push(shape);
      else plan.open = true;
    }
    if (entry.generic !== undefined || entry.prototype !== undefined) plan.open = true;
  }
  return plan;
}

function propertiesShape(field: FieldDefinition, context: FieldTypeContext): NestedShape | undefined {
  if (field.config.properties === undefined) return undefined;
  return context.toolkit.shape(context.toolkit.fields(field.config.properties));
}

/** The shape a value is handled with: declared properties, else the allowed stream it matches. */
function shapeFor(value: unknown, field: FieldDefinition, context: FieldTypeContext, normalized: boolean): NestedShape | undefined {
  const own = propertiesShape(field, context);
  if (own) return own;
  const allowed = allowedPlan(field, context);
  if (!allowed) return undefined;
  return allowed.shapes.find((s) => s.matches(normalized ? value : s.normalize(value)));
}

export const objectType: FieldType = {
  name: 'object',
  rule: 'object',
  message: 'The :attribute field must be an object.',
  configKeys: ['properties', 'allowed', 'wrapper'],
  schema(field, context) {
    const own = propertiesShape(field, context);
    const base: Record<string, unknown> = own ? { ...own.schema } : { type: 'object' };
    const allowed = allowedPlan(field, context);
    if (allowed && !allowed.open && allowed.shapes.length > 0) {
      return {
        allOf: [
          { ...base, 'x-rule': 'object', 'x-message': 'The :attribute field must be an object.' },
          {
            ...context.toolkit.predicate((value) => allowed.shapes.some((s) => s.matches(value))),
            'x-rule': 'allowed',
            'x-message': 'The :attribute field must match one of its allowed shapes.',
          },
        ],
      };
    }
    return base;
  },
  normalize(value, field, context) {
    const shape = shapeFor(value, field, context, false);
    return shape ? shape.normalize(value) : value;
  },
  cast(value, field, context) {
    const shape = shapeFor(value, field, context, true);
    return shape ? shape.cast(value) : value;
  },
  serialize(value, field, context) {
    const shape = shapeFor(value, field, context, true);
    return shape ? shape.serialize(value) : value;
  },
  defaultValue: (field) => plainDefault(field.config.default),
  check(field) {
    const problems: string[] = [];
    const { properties, allowed } = field.config;
    if (properties !== undefined && !Array.isArray(properties) && !isRecord(properties)) problems.push(`Field [${field.handle}]: config.properties must be a list or an object of field definitions.`);
    if (allowed !== undefined) {
      const ok = Array.isArray(allowed) && allowed.every((a) => isRecord(a) && ['stream', 'generic', 'prototype'].some((k) => k in a));
      if (!ok) problems.push(`Field [${field.handle}]: config.allowed must be a list of objects with a stream, generic or prototype key.`);
    }
    return problems;
  },
};

export type { StreamDefinition };
