import { _, Ajv, Name, type ErrorObject, type KeywordCxt, type KeywordDefinition, type Options, type ValidateFunction } from 'ajv';
import addFormatsPkg from 'ajv-formats';
import { cachedValidator, STREAM_SCHEMAS } from './ajv-code-cache.js';
import { lazyRequire } from './tools/lazy-require.js';

// ajv-formats is CommonJS: under ESM its default import is the module object, the plugin is its `default`.
const addFormats = addFormatsPkg.default;

/** One configured ajv instance factory, so every plugin validates the same way (through `cacheableAjv`). */
function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Options of an instance whose validators can be written out as code (ajv-code-cache.ts):
 * its source kept, and the formats named by the module that defines them.
 */
export function cacheableAjv(options: Options): Ajv {
  return createAjv({ ...options, code: { ...options.code, source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } });
}

let configAjv: Ajv | undefined;
const CONFIG_OPTIONS: Options = { useDefaults: true, code: { optimize: false } };
const configValidators = new WeakMap<object, ValidateFunction>();

/**
 * The validator of a configuration schema (the kernel's, every plugin's settings section and
 * options), defaults filled in place. One instance compiles them all: each new instance compiles
 * the JSON Schema meta-schemas and the formats again, about 15 ms apiece; one per settings
 * section cost 135 ms of every boot. Each schema object gets one validator per process, and its
 * code comes from the disk after the first boot (ajv-code-cache.ts).
 */
export function configValidator(schema: Record<string, unknown>): ValidateFunction {
  let validate = configValidators.get(schema);
  if (validate === undefined) {
    // Unoptimized code: these validators run once per boot, and optimizing them cost about 20 ms
    // of it (issue #33, boot at scale).
    validate = cachedValidator(schema, `config ${JSON.stringify(CONFIG_OPTIONS)}`, () => (configAjv ??= cacheableAjv(CONFIG_OPTIONS)));
    configValidators.set(schema, validate);
  }
  return validate;
}

/**
 * The validator of a schema of ours compiled once per boot (the stream definition schema with
 * its addon extensions), its code from the disk after the first boot. `options` are the ajv
 * instance's; `purpose` names them in the cache.
 */
export function bootValidator(schema: Record<string, unknown>, purpose: string, options: Options): ValidateFunction {
  return cachedValidator(schema, `${purpose} ${JSON.stringify(options)}`, () => cacheableAjv(options));
}

let metaCheck: ValidateFunction | undefined;

/**
 * The JSON Schema meta-schema ajv checks schemas against by default (draft-07), without its
 * `$id` (the instance that compiles it already holds it under that id). Read when first needed:
 * a boot whose schemas all come from the code cache never checks one.
 */
const draft07Json = lazyRequire<Record<string, unknown>>('ajv/dist/refs/json-schema-draft-07.json');
function draft07(): Record<string, unknown> {
  const { $id: _id, ...schema } = draft07Json();
  return schema;
}

/**
 * ajv's own `validateSchema` step (the schema checked against draft-07), with the validator
 * from the code cache. For an instance made with `validateSchema: false` that compiles schemas
 * built at boot (the fields plugin's plans): with it on, each instance compiles the meta-schema
 * before its first schema, about 30 ms of a boot (issue #33). Throws ajv's own error
 * ("schema is invalid: ..."), its text made by ajv's `errorsText` (which reads only its
 * arguments: no instance is made for it).
 */
export function assertValidSchema(schema: object): void {
  metaCheck ??= bootValidator(draft07(), 'json-schema meta-schema', {});
  if (!metaCheck(schema)) throw new Error(`schema is invalid: ${Ajv.prototype.errorsText.call(undefined, metaCheck.errors)}`);
}

/**
 * The validator of a schema of a stream's plan (its whole entry schema, or one field's: the
 * fields plugin), its code from the disk after the first boot when the schema is plain JSON.
 * `ajv` makes (once) an instance of `cacheableAjv(options)`; it is only called on a miss. The
 * apps' schemas change with their definitions, so their files share a folder with a byte
 * budget (ajv-code-cache.ts).
 */
export function streamValidator(schema: Record<string, unknown>, options: Options, ajv: () => Ajv): ValidateFunction {
  return cachedValidator(schema, `stream ${JSON.stringify(options)}`, ajv, STREAM_SCHEMAS.folder, STREAM_SCHEMAS.budgetBytes);
}

// The name ajv's generated code gives the data a validator was called with (its `N.rootData`).
const ROOT_DATA = new Name('rootData');

/**
 * A keyword whose value is an index into a list of functions the caller passes as `this.p`
 * (an instance with `passContext: true`, the validator called as `validate.call({ p }, data)`):
 * `(data, rootData) => boolean`, failing with the keyword's default error. A schema naming its
 * functions so stays plain JSON, and its generated code serves any list of the same shape
 * (the ajv code cache). Only its type is checked (a number): the caller owns the list.
 */
export function indexedPredicateKeyword(keyword: string): KeywordDefinition {
  return {
    keyword,
    schemaType: 'number',
    code(cxt: KeywordCxt) {
      cxt.fail(_`!this.p[${cxt.schemaCode}](${cxt.data}, ${ROOT_DATA})`);
    },
  };
}

/** "at /fields/2/type: must match pattern ..." style text for one ajv error. */
export function describeAjvError(error: ErrorObject): { path: string; message: string } {
  let path = error.instancePath || '/';
  let message = error.message ?? 'is invalid';
  if (error.propertyName !== undefined) {
    // A propertyNames failure: point at the offending key itself.
    path = `${error.instancePath}/${error.propertyName}`;
    message = `is not a valid name (${message})`;
  } else if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    path = `${error.instancePath}/${extra}`;
    message = 'is not a known key';
  } else if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    path = `${error.instancePath}/${missing}`;
    message = 'is required';
  } else if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    message = `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { path, message };
}

/**
 * Pick the most useful error of an ajv run: `oneOf`/`anyOf`/`if` wrappers only say
 * "must match a schema", so prefer the deepest concrete error.
 */
export function primaryAjvError(errors: ErrorObject[]): ErrorObject {
  const concrete = errors.filter((e) => !['oneOf', 'anyOf', 'if', 'not'].includes(e.keyword));
  const pool = concrete.length > 0 ? concrete : errors;
  return pool.reduce((best, e) => (e.instancePath.length > best.instancePath.length ? e : best), pool[0]!);
}
