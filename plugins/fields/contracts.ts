import type { FieldDefinition, StreamDefinition } from '../streams/index.js';

export type EntryAttributes = Record<string, unknown>;

/**
 * Data access the validator needs for its async checks (unique, relationship
 * existence). The entries layer passes it in, so field types never reach into sources.
 */
export interface EntryLookup {
  /** True when stream `stream` has an entry whose `field` equals `value` (other than `exceptKey`). */
  exists(stream: string, field: string, value: unknown, exceptKey?: unknown): Promise<boolean>;
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
  /** Relationship info when this field references entries of another stream. */
  relation?(field: FieldDefinition): RelationInfo | undefined;
  /** Extra definition problems for a field of this type (messages name the field). */
  check?(field: FieldDefinition, stream: StreamDefinition): string[];
}

/** A validation rule usable in `rules` strings (`name:arg1,arg2`). */
export interface RuleDefinition {
  name: string;
  /**
   * A JSON Schema fragment for the rule (compiled into the stream's ajv validator), or
   * a synchronous predicate when JSON Schema cannot say it.
   */
  schema?(args: string[], field: FieldDefinition): Record<string, unknown>;
  test?(value: unknown, args: string[], field: FieldDefinition, attributes: EntryAttributes): boolean;
  /** Laravel-like message; `:attribute` and `:0`, `:1` ... are replaced. */
  message: string;
  /** Check the arguments at definition load; return a problem message or undefined. */
  checkArgs?(args: string[]): string | undefined;
}

export interface FieldsService {
  registerType(type: FieldType): void;
  getType(name: string): FieldType | undefined;
  registerRule(rule: RuleDefinition): void;
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
  /** Cast a filter value for `field` (unknown fields: returned unchanged). Throws BadRequestError when uncastable. */
  castFilterValue(stream: StreamDefinition, field: string, value: unknown): unknown;
  /** Relationship fields of the stream (for `with` and `links.<handle>`). */
  relations(stream: StreamDefinition): RelationInfo[];
}
