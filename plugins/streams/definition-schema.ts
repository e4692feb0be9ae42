/**
 * The JSON Schema of a stream definition, built from the spec's tables. One compiled
 * validator checks every definition (files at boot, API payloads); addons add the
 * schema of their own top-level keys through the `definition.extend` hook.
 */

export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]*$';
/**
 * Field handles and key names: identifiers, never a name every object already has
 * (`__proto__`, `constructor`, `toString`...): such an attribute could reach an object's
 * prototype or shadow a method the code relies on.
 */
/** A field or a dotted path into one, for `config.indexes` (no prototype names at any level). */
const INDEX_FIELD_PATTERN = '^(?!.*(?:^|\\.)(?:__proto__|constructor|prototype)(?:\\.|$))[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$';
export const FIELD_HANDLE_PATTERN = '^(?!(?:__proto__|constructor|prototype|toString|valueOf|hasOwnProperty|isPrototypeOf|propertyIsEnumerable|toLocaleString)$)[A-Za-z_][A-Za-z0-9_]*$';
export const TYPE_PATTERN = '^[a-z][a-z0-9_]*$';
export const IMPORT_PATTERN = '^@\\S+\\.json$';
export const CLASS_NAME_PATTERN =
  '^\\\\?[A-Za-z_][A-Za-z0-9_]*(\\\\[A-Za-z_][A-Za-z0-9_]*)+(@[A-Za-z_][A-Za-z0-9_]*)?$';

/** Source types the spec names; any lowercase name is accepted too (addon sources, checked at load). */
export const CORE_SOURCE_TYPES = ['filebase', 'file', 'self', 'database', 'filesystem', 'collection', 'eloquent', 'scout', 'search'];

const className = { type: 'string', pattern: CLASS_NAME_PATTERN };
const stringOrStrings = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };
const importString = { type: 'string', pattern: IMPORT_PATTERN };
/** `items` and `properties` hold field-like definitions: validated loosely, they are type-specific. */
const fieldLikeCollection = { anyOf: [{ type: 'array' }, { type: 'object' }] };

const fieldConfig = {
  type: 'object',
  properties: {
    default: true,
    // `options` is checked by the choice types themselves: their message says what a good
    // value looks like ("an object of value to label, or a list of values"), ajv's would not.
    options: true,
    related: { anyOf: [{ type: 'string', pattern: ID_PATTERN }, { type: 'array', minItems: 1, items: { type: 'string', pattern: ID_PATTERN } }] },
    multiple: { type: 'boolean' },
    key_name: { type: 'string', pattern: FIELD_HANDLE_PATTERN },
    relation: { type: 'string', pattern: FIELD_HANDLE_PATTERN },
    stream: { anyOf: [{ type: 'string', pattern: ID_PATTERN }, { type: 'object' }] },
    items: fieldLikeCollection,
    enforce_items: { type: 'boolean' },
    allowed: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          stream: { type: 'string', pattern: ID_PATTERN },
          generic: { type: 'string', minLength: 1 },
          prototype: { type: 'string', minLength: 1 },
        },
      },
    },
    properties: fieldLikeCollection,
    wrapper: { anyOf: [{ const: 'array' }, className] },
    format: { type: 'string', minLength: 1 },
    timezone: { type: 'string', minLength: 1 },
    precision: { type: 'integer', minimum: 0 },
    separator: { type: 'string' },
  },
};

const fieldBody = {
  type: 'object',
  properties: {
    handle: { type: 'string', pattern: FIELD_HANDLE_PATTERN },
    type: { type: 'string', pattern: TYPE_PATTERN },
    name: { type: 'string' },
    description: { type: 'string' },
    required: { type: 'boolean' },
    unique: { type: 'boolean' },
    rules: stringOrStrings,
    protected: { type: 'boolean' },
    example: true,
    docs: { type: 'string' },
    input: {
      type: 'object',
      properties: { type: { type: 'string' }, language: { type: 'string' } },
    },
    config: fieldConfig,
  },
  allOf: [
    {
      if: { properties: { type: { const: 'relationship' } }, required: ['type'] },
      then: { required: ['config'], properties: { config: { required: ['related'] } } },
    },
  ],
};

const routeObject = {
  type: 'object',
  properties: {
    handle: { type: 'string' },
    uri: { type: 'string' },
    view: { type: 'string' },
    uses: { type: 'string' },
    as: { type: 'string' },
    verb: { enum: ['any', 'get', 'put', 'post', 'patch', 'delete', 'GET', 'PUT', 'POST', 'PATCH', 'DELETE'] },
    middleware: stringOrStrings,
    constraints: {
      anyOf: [
        { type: 'object', additionalProperties: { type: 'string' } },
        { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
      ],
    },
    csrf: { type: 'boolean' },
    defer: { type: 'boolean' },
    parse: { type: 'boolean' },
    stream: { type: 'string' },
    entry: true,
  },
};

const sourceConfig = {
  type: 'object',
  properties: {
    type: { anyOf: [{ enum: CORE_SOURCE_TYPES }, { type: 'string', pattern: TYPE_PATTERN }, className] },
    format: { enum: ['json', 'yaml', 'md', 'html', 'tpl', 'csv'] },
    path: { type: 'string', minLength: 1 },
    file: { type: 'string', minLength: 1 },
    table: { type: 'string', minLength: 1 },
    connection: { type: 'string', minLength: 1 },
    model: className,
    disk: { type: 'string' },
    index: { type: 'string' },
    search_fields: { type: 'array', items: { type: 'string' } },
    scout_prefix: { type: 'boolean' },
  },
  allOf: [
    {
      if: { properties: { type: { const: 'filebase' } }, required: ['type'] },
      then: { properties: { format: { enum: ['json', 'yaml', 'md', 'html', 'tpl'] } } },
    },
    {
      if: { properties: { type: { const: 'file' } }, required: ['type'] },
      then: { properties: { format: { enum: ['json', 'csv'] } } },
    },
    { if: { properties: { type: { const: 'eloquent' } }, required: ['type'] }, then: { required: ['model'] } },
  ],
};

/** The schema with the extension keys addons declared. */
export function definitionSchema(extensions: Record<string, Record<string, unknown>> = {}): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      $schema: { type: 'string' },
      id: { type: 'string', pattern: ID_PATTERN, maxLength: 128 },
      handle: { type: 'string', pattern: ID_PATTERN, maxLength: 128 },
      name: { type: 'string', maxLength: 50 },
      description: { type: 'string' },
      docs: { type: 'string' },
      extends: { type: 'string', pattern: ID_PATTERN },
      config: {
        type: 'object',
        properties: {
          source: sourceConfig,
          key_name: { type: 'string', pattern: FIELD_HANDLE_PATTERN },
          abstract: className,
          criteria: className,
          repository: className,
          factory: className,
          schema: className,
          collection: className,
          adapter: className,
          filesystem: className,
          // Secondary indexes of the in-memory engine (issue #16): a field name (hash) or
          // {field, type: hash|sorted}; the field must be declared (definition-check.ts).
          indexes: {
            type: 'array',
            maxItems: 32,
            items: {
              anyOf: [
                { type: 'string', pattern: INDEX_FIELD_PATTERN },
                {
                  type: 'object',
                  required: ['field'],
                  additionalProperties: false,
                  properties: { field: { type: 'string', pattern: INDEX_FIELD_PATTERN }, type: { enum: ['hash', 'sorted'] } },
                },
              ],
            },
          },
          cache: {
            type: 'object',
            properties: {
              enabled: { type: 'boolean' },
              ttl: { type: 'integer', minimum: 0 },
              store: { type: 'string', minLength: 1 },
            },
          },
        },
      },
      fields: {
        anyOf: [
          { type: 'array', items: { anyOf: [importString, { ...fieldBody, required: ['handle'] }] } },
          {
            type: 'object',
            propertyNames: { pattern: FIELD_HANDLE_PATTERN },
            additionalProperties: { anyOf: [importString, { type: 'string', pattern: TYPE_PATTERN }, fieldBody] },
          },
          importString,
        ],
      },
      rules: { type: 'object', propertyNames: { pattern: FIELD_HANDLE_PATTERN }, additionalProperties: stringOrStrings },
      route: { type: 'string' },
      data: { anyOf: [{ type: 'object' }, { type: 'array' }] },
      routes: {
        anyOf: [
          { type: 'array', items: routeObject },
          { type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, routeObject] } },
        ],
      },
      ui: { type: 'object' },
      ...extensions,
    },
  };
}
