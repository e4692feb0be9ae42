import type { ValidateFunction } from 'ajv';
import type { FieldDefinition, StreamDefinition } from '../streams/index.js';
import type {
  FieldToolkit,
  FieldType,
  FieldTypeContext,
  NestedShape,
  RelationInfo,
  RuleDefinition,
  ValueKind,
} from './contracts.js';
import { defineField, defineFields, isRequired } from './field-define.js';
import { fillArgs, INVALID_MESSAGE, REQUIRED_MESSAGE } from './messages.js';
import { parseRule } from './rule-parser.js';

/** A definition problem found while compiling (unknown nested type, bad rule...). */
export class DefinitionIssue extends Error {
  constructor(readonly path: string, message: string) {
    super(message);
    this.name = 'DefinitionIssue';
  }
}

/** Every problem of one definition (a definition can have several; all are reported at once). */
export class DefinitionIssues extends Error {
  constructor(readonly issues: DefinitionIssue[]) {
    super(issues.map((i) => i.message).join(' '));
    this.name = 'DefinitionIssues';
  }
}

/** A rule that runs after validation and cast (unique, exists). */
export interface VerifyRule {
  name: string;
  args: string[];
  rule: RuleDefinition;
  message: string;
}

export interface FieldPlan {
  field: FieldDefinition;
  type: FieldType;
  index: number;
  required: boolean;
  /** `sometimes`: required only applies when the attribute is present. */
  sometimes: boolean;
  /** `present`: the attribute must be in the payload (null allowed). */
  present: boolean;
  /** `filled`: when present, the attribute must have a value (null refused). */
  filled: boolean;
  kind: ValueKind;
  verifyRules: VerifyRule[];
}

/** Everything about one stream definition computed once (the hot paths only read it). */
export interface StreamPlan {
  stream: StreamDefinition;
  context: FieldTypeContext;
  fields: FieldPlan[];
  byHandle: Map<string, FieldPlan>;
  validate: ValidateFunction;
  protectedHandles: Set<string>;
  /** Fields whose type has a serialize step. */
  serialized: FieldPlan[];
  /** No protected field and nothing to serialize: serialize() returns the entry itself. */
  plain: boolean;
  /** Fields that do async checks after cast (type verify or verify rules). */
  verified: FieldPlan[];
  linked: FieldPlan[];
  relations: RelationInfo[];
  /** Other streams read while compiling, with the definition object seen then. */
  deps: Map<string, StreamDefinition | undefined>;
}

export interface PlanEnvironment {
  /**
   * `schema` compiled, its `x-test` indexes calling `predicates` (its code may come from the ajv
   * code cache); never kept in ajv's own cache (plans are cached per definition object).
   */
  compile(schema: Record<string, unknown>, predicates: readonly Predicate[]): ValidateFunction;
  types: Map<string, FieldType>;
  rules: Map<string, RuleDefinition>;
  timezone: string;
  resolveStream(id: string): StreamDefinition | undefined;
}

export const RULE = 'x-rule';
export const MESSAGE = 'x-message';
/**
 * A check JSON Schema cannot say (a rule's `test`, a type's `toolkit.predicate`). Schemas name
 * it by its index in the compiler's list (`"x-test": 3`), so a schema stays plain JSON and its
 * generated code can be kept on disk and run with another boot's functions (kernel/ajv.ts,
 * `indexedPredicateKeyword`).
 */
export const TEST = 'x-test';
export type Predicate = (value: unknown, root: unknown) => boolean;

const NUMERIC_RULES = new Set(['numeric', 'integer', 'decimal']);

function kindOf(field: FieldDefinition, type: FieldType, rules: string[]): ValueKind {
  const names = rules.map((r) => parseRule(r).name);
  if (names.some((n) => NUMERIC_RULES.has(n))) return 'numeric';
  if (type.kind) return type.kind(field);
  if (names.includes('array')) return 'array';
  return 'string';
}

/** Compiles one stream definition into a StreamPlan; also the toolkit nested fields use. */
export class PlanCompiler {
  readonly deps = new Map<string, StreamDefinition | undefined>();
  private readonly nested = new Map<string, NestedShape | null>();
  private readonly building = new Set<string>();
  private readonly shapes = new WeakMap<FieldDefinition[], NestedShape>();
  private readonly inline = new WeakMap<object, NestedShape>();
  private readonly matchers = new WeakMap<FieldDefinition, ValidateFunction>();
  /** Every predicate the schemas of this compiler name, by index (see TEST). */
  private readonly predicates: Predicate[] = [];
  /** Rule problems found while compiling; reported together at the end. */
  private readonly issues: DefinitionIssue[] = [];
  readonly context: FieldTypeContext;

  constructor(private readonly stream: StreamDefinition, private readonly env: PlanEnvironment) {
    const toolkit: FieldToolkit = {
      define: (raw, handle) => defineField(raw, handle),
      fields: (raw) => this.fieldList(raw),
      shape: (fields) => this.shape(fields),
      schema: (field) => this.nestedSchema(field),
      normalize: (field, value) => this.normalize(field, value),
      cast: (field, value) => this.cast(field, value),
      serialize: (field, value) => this.serialize(field, value),
      stream: (ref) => this.nestedStream(ref),
      resolveStream: (id) => this.resolve(id),
      matches: (field, value) => this.matches(field, value),
      predicate: (test) => ({ [TEST]: this.predicate((value) => test(value)) }),
    };
    this.context = { stream, timezone: env.timezone, toolkit };
  }

  /** `test`'s index in this compiler's list, as schemas name it. */
  private predicate(test: Predicate): number {
    return this.predicates.push(test) - 1;
  }

  compile(): StreamPlan {
    const stream = this.stream;
    const fields: FieldPlan[] = [];
    const properties: Record<string, unknown> = {};
    for (const handle of Object.keys(stream.rules)) {
      if (!stream.fields.some((f) => f.handle === handle)) {
        this.issues.push(new DefinitionIssue(`/rules/${handle}`, `Stream [${stream.id}] has rules for [${handle}], which is not one of its fields.`));
      }
    }
    stream.fields.forEach((field, index) => {
      const type = this.typeOf(field, `/fields/${index}/type`);
      const extra = stream.rules[field.handle] ?? [];
      const rules = [...field.rules, ...extra];
      if (field.unique && !rules.some((r) => parseRule(r).name === 'unique')) rules.push('unique');
      const kind = kindOf(field, type, rules);
      const verifyRules: VerifyRule[] = [];
      // Where each rule was written, for load-time problems: the field's list, then the stream's.
      const where = (j: number): string =>
        j < field.rules.length ? `/fields/${index}/rules/${j}` : j < field.rules.length + extra.length ? `/rules/${field.handle}/${j - field.rules.length}` : `/fields/${index}/unique`;
      properties[field.handle] = this.fieldSchema(field, type, rules, kind, verifyRules, where);
      const names = new Set(rules.map((r) => parseRule(r).name));
      fields.push({ field, type, index, required: isRequired(field, extra), sometimes: names.has('sometimes'), present: names.has('present'), filled: names.has('filled'), kind, verifyRules });
    });
    if (this.issues.length > 0) throw new DefinitionIssues(this.issues);
    const schema = { type: 'object', properties };
    let validate: ValidateFunction;
    try {
      validate = this.env.compile(schema, this.predicates);
    } catch (error) {
      throw new DefinitionIssue('/fields', `Stream [${stream.id}] cannot be compiled: ${(error as Error).message}`);
    }
    const protectedHandles = new Set(fields.filter((f) => f.field.protected).map((f) => f.field.handle));
    const serialized = fields.filter((f) => f.type.serialize && !f.field.protected);
    const relations: RelationInfo[] = [];
    for (const f of fields) {
      const info = f.type.relation?.(f.field);
      if (info) relations.push(info);
    }
    return {
      stream,
      context: this.context,
      fields,
      byHandle: new Map(fields.map((f) => [f.field.handle, f])),
      validate,
      protectedHandles,
      serialized,
      plain: protectedHandles.size === 0 && serialized.length === 0,
      verified: fields.filter((f) => f.type.verify || f.verifyRules.length > 0),
      linked: fields.filter((f) => f.type.link),
      relations,
      deps: this.deps,
    };
  }

  private typeOf(field: FieldDefinition, path: string): FieldType {
    const type = this.env.types.get(field.type);
    if (!type) {
      throw new DefinitionIssue(path, `Field [${field.handle}] of stream [${this.stream.id}] has unknown type [${field.type}]; no plugin registers it.`);
    }
    return type;
  }

  /** The type's fragment and one fragment per rule, each annotated for error messages. */
  private fieldSchema(
    field: FieldDefinition,
    type: FieldType,
    rules: string[],
    kind: ValueKind,
    verifyRules: VerifyRule[],
    where: (index: number) => string,
  ): Record<string, unknown> {
    const parts: Record<string, unknown>[] = [
      { ...type.schema(field, this.context), [RULE]: type.rule ?? type.name, [MESSAGE]: type.message ?? INVALID_MESSAGE },
    ];
    rules.forEach((source, j) => {
      const parsed = parseRule(source);
      const rule = this.env.rules.get(parsed.name);
      if (!rule) {
        this.issues.push(new DefinitionIssue(where(j), `Field [${field.handle}] of stream [${this.stream.id}] has unknown rule [${parsed.name}].`));
        return;
      }
      const problem = rule.checkArgs?.(parsed.args);
      if (problem) {
        this.issues.push(new DefinitionIssue(where(j), `Field [${field.handle}] of stream [${this.stream.id}]: rule [${parsed.source}] ${problem}.`));
        return;
      }
      if (rule.marker) return;
      const message = fillArgs(rule.messages?.[kind] ?? rule.message, parsed.args);
      if (rule.schema) parts.push({ ...rule.schema(parsed.args, field, kind), [RULE]: parsed.name, [MESSAGE]: message });
      if (rule.test) {
        const test = rule.test;
        const args = parsed.args;
        parts.push({
          [TEST]: this.predicate((value, root) => test(value, args, field, (root ?? {}) as Record<string, unknown>, kind)),
          [RULE]: parsed.name,
          [MESSAGE]: message,
        });
      }
      if (rule.verify) verifyRules.push({ name: parsed.name, args: parsed.args, rule, message });
    });
    return parts.length === 1 ? parts[0]! : { allOf: parts };
  }

  /** A nested field: null passes unless required; its type and rules as for a top-level field. */
  nestedSchema(field: FieldDefinition): Record<string, unknown> {
    const type = this.typeOf(field, `/fields`);
    const kind = kindOf(field, type, field.rules);
    const inner = this.fieldSchema(field, type, field.rules, kind, [], (j) => `/fields/${field.handle}/rules/${j}`);
    const required = isRequired(field);
    return {
      if: { type: 'null' },
      then: required ? { not: {}, [RULE]: 'required', [MESSAGE]: REQUIRED_MESSAGE } : true,
      else: inner,
    };
  }

  normalize(field: FieldDefinition, value: unknown): unknown {
    if (value === null || value === undefined) return value;
    const type = this.env.types.get(field.type);
    return type?.normalize ? type.normalize(value, field, this.context) : value;
  }

  cast(field: FieldDefinition, value: unknown): unknown {
    if (value === null || value === undefined) return value;
    const type = this.env.types.get(field.type);
    return type?.cast ? type.cast(value, field, this.context) : value;
  }

  serialize(field: FieldDefinition, value: unknown): unknown {
    if (value === null || value === undefined) return value;
    const type = this.env.types.get(field.type);
    return type?.serialize ? type.serialize(value, field, this.context) : value;
  }

  matches(field: FieldDefinition, value: unknown): boolean {
    let check = this.matchers.get(field);
    if (!check) {
      const schema = this.nestedSchema(field);
      check = this.env.compile(schema, this.predicates);
      this.matchers.set(field, check);
    }
    return check(value) as boolean;
  }

  resolve(id: string): StreamDefinition | undefined {
    if (id === this.stream.id) return this.stream;
    const found = this.env.resolveStream(id);
    this.deps.set(id, found);
    return found;
  }

  /** Another stream's fields as an object shape (array `stream`, object `allowed`). */
  nestedStream(ref: unknown): NestedShape | undefined {
    let id: string;
    let fields: FieldDefinition[];
    if (typeof ref === 'string') {
      id = ref;
      const cached = this.nested.get(id);
      if (cached !== undefined) return cached ?? undefined;
      const definition = this.resolve(ref);
      if (!definition) {
        this.nested.set(id, null);
        return undefined;
      }
      fields = definition.fields;
    } else if (ref && typeof ref === 'object' && !Array.isArray(ref)) {
      const known = this.inline.get(ref);
      if (known) return known;
      const inline = ref as Record<string, unknown>;
      id = typeof inline.id === 'string' ? inline.id : '(inline)';
      fields = this.fieldList(inline.fields);
    } else {
      return undefined;
    }
    if (this.building.has(id)) {
      // A stream shaped by itself (a tree): one level is validated, deeper levels are plain objects.
      return plainNested();
    }
    this.building.add(id);
    try {
      const nested = this.buildNested(id, fields);
      if (typeof ref === 'string') this.nested.set(id, nested);
      else this.inline.set(ref as object, nested);
      return nested;
    } finally {
      this.building.delete(id);
    }
  }

  /** `items`/`properties` (list or object of field-like definitions), cached per raw object. */
  fieldList(raw: unknown): FieldDefinition[] {
    const key = raw !== null && typeof raw === 'object' ? raw : undefined;
    const cached = key ? fieldLists.get(key) : undefined;
    if (cached) return cached;
    const list = defineFields(raw).map((f) => {
      if (!f.field) throw new DefinitionIssue('/fields', `Nested field [${f.handle}] is not a field definition.`);
      return f.field;
    });
    if (key) fieldLists.set(key, list);
    return list;
  }

  /** An object made of `fields`, built once per list (lists are cached per raw config object). */
  shape(fields: FieldDefinition[]): NestedShape {
    let shape = this.shapes.get(fields);
    if (!shape) {
      shape = this.buildNested('(shape)', fields);
      this.shapes.set(fields, shape);
    }
    return shape;
  }

  private buildNested(id: string, fields: FieldDefinition[]): NestedShape {
    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    for (const field of fields) {
      properties[field.handle] = this.nestedSchema(field);
      if (isRequired(field)) required.push(field.handle);
    }
    const schema: Record<string, unknown> = { type: 'object', properties };
    if (required.length > 0) schema.required = required;
    let check: ValidateFunction | undefined;
    return {
      schema,
      matches: (value) => {
        check ??= this.env.compile(schema, this.predicates);
        return check(value) as boolean;
      },
      normalize: (value) => mapObject(value, fields, (f, v) => this.normalize(f, v), false),
      cast: (value) => mapObject(value, fields, (f, v) => this.cast(f, v), false),
      serialize: (value) => mapObject(value, fields, (f, v) => this.serialize(f, v), true),
    };
  }
}

/**
 * Nested field definitions by the raw config object they came from: definitions are
 * immutable, so the same FieldDefinition objects (and their compiled matchers) are reused.
 */
const fieldLists = new WeakMap<object, FieldDefinition[]>();

function plainNested(): NestedShape {
  return { schema: { type: 'object' }, normalize: (v) => v, cast: (v) => v, serialize: (v) => v, matches: (v) => v !== null && typeof v === 'object' && !Array.isArray(v) };
}

/**
 * Apply `step` to each declared field of a plain object (other keys kept), dropping
 * protected fields when serializing. Returns a promise only when a step did.
 */
export function mapObject(
  value: unknown,
  fields: FieldDefinition[],
  step: (field: FieldDefinition, value: unknown) => unknown,
  dropProtected: boolean,
): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = { ...source };
  const pending: Array<[string, Promise<unknown>]> = [];
  for (const field of fields) {
    if (dropProtected && field.protected) {
      delete out[field.handle];
      continue;
    }
    if (!Object.hasOwn(source, field.handle)) continue;
    const result = step(field, source[field.handle]);
    if (result instanceof Promise) pending.push([field.handle, result]);
    else out[field.handle] = result;
  }
  if (pending.length === 0) return out;
  return Promise.all(pending.map(([, p]) => p)).then((values) => {
    values.forEach((v, i) => {
      out[pending[i]![0]] = v;
    });
    return out;
  });
}
