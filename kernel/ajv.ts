import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsPkg from 'ajv-formats';

// ajv-formats is CommonJS: under ESM its default import is the module object, the plugin is its `default`.
const addFormats = addFormatsPkg.default;

/** One configured ajv instance factory, so every plugin validates the same way. */
export function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

let configAjv: Ajv | undefined;

/**
 * The one instance that validates configuration (the kernel's schema, every plugin's settings
 * section and options), defaults filled in place. Shared: each new instance compiles the JSON
 * Schema meta-schemas and the formats again, about 15 ms apiece; one per settings section cost
 * 135 ms of every boot. Each schema object is compiled once (ajv caches by schema).
 */
export function configValidator(schema: Record<string, unknown>): ValidateFunction {
  // Unoptimized code: these validators run once per boot, and optimizing them cost about 20 ms
  // of it (issue #33, boot at scale).
  configAjv ??= createAjv({ useDefaults: true, code: { optimize: false } });
  return configAjv.compile(schema);
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
