import { type RegisterOptions } from '../../kernel/index.js';
import type { DefinitionProblem, FieldDefinition, StreamDefinition } from '../streams/index.js';

export type EntryAttributes = Record<string, unknown>;

/**
 * Data access the validator needs for its async checks (unique, relationship
 * existence). The entries layer passes it in, so field types never reach into sources.
 */
export interface EntryLookup {
  /** True when stream `stream` has an entry whose `field` equals `value` (other than `exceptKey`). */
  exists(stream: string, field: string, value: unknown, exceptKey?: unknown): Promise<boolean>;
  /**
   * Optional: the largest value of `field` in `stream` (undefined when empty), so a
   * non-key integer field with `config.default: "increment"` can get the next number.
   */
  max?(stream: string, field: string): Promise<unknown>;
  /** Optional: whether a stream is defined (a relationship to a missing stream says so, not just "invalid"). */
  hasStream?(stream: string): boolean;
}

export type WriteMode = 'create' | 'replace' | 'patch';

export interface PrepareOptions {
  mode: WriteMode;
  /** Stored attributes before this write (replace/patch of an existing entry). */
  existing?: EntryAttributes;
  /** Key of the entry being written, for `unique` to ignore the entry itself. */
  key?: unknown;
  lookup: EntryLookup;
}

/** A relationship-like field the API can link and the entries layer can eager-load. */
export interface RelationInfo {
  /** Field handle holding the key(s). */
  handle: string;
  /** Relation name for `with` (default: handle without a trailing `_id`). */
  relation: string;
  /** Related stream id (the first one when several are listed). */
  stream: string;
  /** Key field on the related stream. */
  keyName: string;
  multiple: boolean;
}

/** The contract of one field type (core or addon). One place per type for everything it means. */
export interface FieldTypeContext {
  stream: StreamDefinition;
  /** Application timezone setting. */
  timezone: string;
  /** Nested fields (array items, object properties, streams used as item shapes). */
  toolkit: FieldToolkit;
}

/** How `min`/`max`/`size`/`between` measure a value (Laravel's "size" of an attribute). */
export type ValueKind = 'numeric' | 'string' | 'array';

/**
 * Helpers the service hands to field types that hold other fields (array `items`,
 * object `properties`, array `stream`): each nested field is handled by its own type
 * through the very same path as a top-level field. Results are cached per definition.
 */
export interface FieldToolkit {
  /** A field-like definition (`"integer"` or `{type, rules, config}`) as a FieldDefinition; undefined when unusable. */
  define(raw: unknown, handle: string): FieldDefinition | undefined;
  /** Field-like definitions given as a list or as an object keyed by handle (`items`, `properties`). */
  fields(raw: unknown): FieldDefinition[];
  /** The complete validation schema of a nested field (its type and its rules, annotated for messages). */
  schema(field: FieldDefinition): Record<string, unknown>;
  normalize(field: FieldDefinition, value: unknown): unknown;
  /** Stored form of a nested value; may return a promise. */
  cast(field: FieldDefinition, value: unknown): unknown;
  serialize(field: FieldDefinition, value: unknown): unknown;
  /** An object made of `fields` (object `properties`). */
  shape(fields: FieldDefinition[]): NestedShape;
  /** The entries of another stream as a shape (`stream` id or inline definition); undefined when unknown. */
  stream(ref: unknown): NestedShape | undefined;
  /** A stream definition by id (the registry), undefined when unknown. */
  resolveStream(id: string): StreamDefinition | undefined;
  /** True when `value` (normalized) passes the complete schema of `field` (array items of several kinds). */
  matches(field: FieldDefinition, value: unknown): boolean;
  /**
   * A schema fragment that runs a synchronous predicate inside the stream's compiled
   * validator (what JSON Schema cannot say: a date in a PHP format). Call at schema time.
   * The fragment names the function by its index in the compiler's list, so the schema stays
   * JSON and its code can come from the ajv code cache; the functions are this compile's.
   */
  predicate(test: (value: unknown) => boolean): Record<string, unknown>;
}

/** An object shape made of fields (object `properties`, another stream's fields). */
export interface NestedShape {
  /** Object schema (required and rules included, annotated for messages). */
  schema: Record<string, unknown>;
  normalize(value: unknown): unknown;
  /** May return a promise. */
  cast(value: unknown): unknown;
  serialize(value: unknown): unknown;
  /** True when a (normalized) value passes `schema`. */
  matches(value: unknown): boolean;
}

/** What async checks (unique, relationship existence) receive. */
export interface VerifyContext extends FieldTypeContext {
  lookup: EntryLookup;
  /** Key of the entry being written (update), for `unique` to ignore it. */
  key?: unknown;
  mode: WriteMode;
  /** The whole attributes of the write (after cast). */
  attributes: EntryAttributes;
}

/** One failed async check of a field type. */
export interface VerifyFailure {
  rule: string;
  /** Laravel-like template (`:attribute` is replaced). */
  message: string;
  /** Sub-path below the field (`1` for the second item of a list), when the failure is nested. */
  path?: string;
}

export interface FieldType {
  /** Type name as used in definitions, `^[a-z][a-z0-9_]*$`. */
  name: string;
  /** Type-specific config keys this type reads (documentation and definition checks). */
  configKeys?: string[];
  /** JSON Schema fragment that validates input for this field (before cast). */
  schema(field: FieldDefinition, context: FieldTypeContext): Record<string, unknown>;
  /** Turn validated input into the stored form (default: unchanged). May be async (hash). */
  cast?(value: unknown, field: FieldDefinition, context: FieldTypeContext): unknown;
  /** Turn the stored form into the serialized (API) form (default: unchanged). */
  serialize?(value: unknown, field: FieldDefinition, context: FieldTypeContext): unknown;
  /** Value for a missing attribute on create, or undefined (`config.default` handling). */
  defaultValue?(field: FieldDefinition, context: FieldTypeContext): unknown;
  /** Cast a filter value (from a query string or a query body) to compare with stored values. */
  castFilter?(value: unknown, field: FieldDefinition, context: FieldTypeContext): unknown;
  /**
   * The JSON Schema (2020-12) of this field's value as the API shows it, for the OpenAPI
   * document (`GET /api/openapi.json`). Types without it are described by the openapi
   * plugin's defaults (core types), or as any value.
   */
  jsonSchema?(field: FieldDefinition): Record<string, unknown>;
  /** Relationship info when this field references entries of another stream. */
  relation?(field: FieldDefinition): RelationInfo | undefined;
  /** Extra definition problems for a field of this type (messages name the field). */
  check?(field: FieldDefinition, stream: StreamDefinition): string[];
  /**
   * Turn an accepted lexical form into the value the schema validates (numeric string
   * to number, "yes" to true). Return anything unrecognised unchanged so the schema
   * rejects it: input is validated, never silently coerced into something else.
   */
  normalize?(value: unknown, field: FieldDefinition, context: FieldTypeContext): unknown;
  /** How `min`/`max`/`size`/`between` measure a value of this field (default `string`). */
  kind?(field: FieldDefinition): ValueKind;
  /** Rule name reported when the type's own schema fails (default: the type name). */
  rule?: string;
  /** Laravel-like message when the type's own schema fails (`:attribute` is replaced). */
  message?: string;
  /** Async checks after validation (relationship existence), on the cast value. */
  verify?(value: unknown, field: FieldDefinition, context: VerifyContext): Promise<VerifyFailure[]>;
  /** Relative API path of the entry this value references (`streams/<id>/entries/<key>`), for `links.<handle>`. */
  link?(value: unknown, field: FieldDefinition, context: FieldTypeContext): string | undefined;
}

/** A validation rule usable in `rules` strings (`name:arg1,arg2`). */
export interface RuleDefinition {
  name: string;
  /**
   * A JSON Schema fragment for the rule (compiled into the stream's ajv validator), or
   * a synchronous predicate when JSON Schema cannot say it.
   */
  schema?(args: string[], field: FieldDefinition, kind: ValueKind): Record<string, unknown>;
  /** `kind` says how size rules measure the value (numeric string in a numeric field: its number). */
  test?(value: unknown, args: string[], field: FieldDefinition, attributes: EntryAttributes, kind: ValueKind): boolean;
  /** Laravel-like message; `:attribute` and `:0`, `:1` ... are replaced (`:values` is every argument). */
  message: string;
  /** Messages by the kind of value measured (min, max, size, between), overriding `message`. */
  messages?: Partial<Record<ValueKind, string>>;
  /** Check the arguments at definition load; return a problem message or undefined. */
  checkArgs?(args: string[]): string | undefined;
  /** Async check run after validation, on the cast value (unique, exists). */
  verify?(value: unknown, args: string[], field: FieldDefinition, context: VerifyContext): Promise<boolean>;
  /** A rule that only marks the field (nullable, sometimes, bail): nothing to check. */
  marker?: boolean;
}

export interface FieldsService {
  /** Register a field type (call in `register`); a name taken by another plugin is refused naming both, unless `{ replace: true }`. */
  registerType(type: FieldType, options?: RegisterOptions): void;
  getType(name: string): FieldType | undefined;
  /** Register a validation rule (call in `register`); same naming rule as types. */
  registerRule(rule: RuleDefinition, options?: RegisterOptions): void;
  /**
   * Validate a write payload against the stream's compiled validator, apply defaults
   * (create) and cast to the stored form. Throws ValidationError (409) with one element
   * per failed rule; never mutates `input`.
   * - create: missing attributes get defaults; required applies.
   * - replace: the payload is the whole entry (defaults applied as on create).
   * - patch: only supplied fields are validated and merged over `existing`.
   */
  prepare(stream: StreamDefinition, input: EntryAttributes, options: PrepareOptions): Promise<EntryAttributes>;
  /** Stored -> API form: protected fields removed, each value serialized by its type. */
  serialize(stream: StreamDefinition, entry: EntryAttributes): Record<string, unknown>;
  /**
   * Cast a filter value for `field` (unknown fields: returned unchanged; arrays cast item
   * by item). Throws BadRequestError when uncastable. With a `LIKE`/`NOT LIKE` operator
   * the value is a pattern and is returned as a string.
   */
  castFilterValue(stream: StreamDefinition, field: string, value: unknown, operator?: string): unknown;
  /** An entry read from a hand-written file, cast by its field types (`"12"` -> 12 for an integer); values that cannot be cast are listed. */
  revive(stream: StreamDefinition, entry: EntryAttributes): { entry: EntryAttributes; problems: readonly string[] };
  /** Relationship fields of the stream (for `with` and `links.<handle>`). */
  relations(stream: StreamDefinition): RelationInfo[];
  /** Relative API paths (`streams/<id>/entries/<key>`) of the entries a stored entry references, by field handle. */
  links(stream: StreamDefinition, entry: EntryAttributes): Record<string, string>;
  /** The definition problems of a stream (unknown type, unknown rule, bad config); the check the registry runs. */
  check(stream: StreamDefinition): DefinitionProblem[];
}
