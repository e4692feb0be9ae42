/** The normalized shapes of stream definitions that every other plugin reads. */

export interface FieldDefinition {
  handle: string;
  /** Field type name; `string` when the definition gave none. */
  type: string;
  name?: string;
  description?: string;
  required: boolean;
  unique: boolean;
  protected: boolean;
  /** Validation rules of the field, pipe-strings split into one rule per element. */
  rules: string[];
  /** Type-specific options (`default`, `related`, `options`, ...). */
  config: Record<string, unknown>;
  /** Other keys (example, docs, input) are kept as given. */
  [key: string]: unknown;
}

export interface RouteDefinition {
  handle: string;
  uri: string;
  view?: string;
  uses?: string;
  as?: string;
  verb?: string;
  middleware?: string[];
  constraints?: Record<string, string>;
  [key: string]: unknown;
}

export interface SourceConfig {
  /** `filebase` (default), `file`, `self`, `collection`, `database`, or an addon type. */
  type: string;
  format?: string;
  path?: string;
  file?: string;
  table?: string;
  connection?: string;
  [key: string]: unknown;
}

export interface CacheConfig {
  enabled?: boolean;
  ttl?: number;
  store?: string;
}

export interface StreamConfig {
  /** Primary key field handle (default `id`). */
  key_name: string;
  /** Always present: the stream's own source merged over the configured default. */
  source: SourceConfig;
  cache?: CacheConfig;
  [key: string]: unknown;
}

export interface StreamDefinition {
  id: string;
  /** Keys no spec rule nor loaded plugin declares, described (issue #27): /readyz and `meta.warnings`. */
  warnings?: string[];
  name: string;
  description?: string;
  /** Parent stream id when the definition `extends` another (already merged in). */
  extends?: string;
  config: StreamConfig;
  /** Fields in declaration order, imports resolved, parent fields merged. */
  fields: FieldDefinition[];
  /** Stream-level rules by field handle, each a list of rule strings. */
  rules: Record<string, string[]>;
  routes: RouteDefinition[];
  /** Inline entries for the `self` source. */
  data?: unknown;
  /** Unknown top-level keys (addon extensions), kept as given. */
  extra: Record<string, unknown>;
  /**
   * The definition as written by its author (imports not expanded, id set): what is
   * persisted in `streams/<id>.json` and returned by the stream endpoints.
   */
  raw: Record<string, unknown>;
  /** Absolute path of the definition file when it came from disk. */
  file?: string;
}

/** Field types whose values are numbers (keys read from names, filters, store types follow this one list). */
export const NUMERIC_FIELD_TYPES: ReadonlySet<string> = new Set(['integer', 'number', 'decimal', 'float', 'double']);

export function fieldOf(definition: StreamDefinition, handle: string): FieldDefinition | undefined {
  // A loop, not `find`: read on every request (the key's type), and a callback is one more function per call.
  for (const field of definition.fields) if (field.handle === handle) return field;
  return undefined;
}
