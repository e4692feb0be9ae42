import type { Ajv, Options, ValidateFunction } from 'ajv';
import { AppError, assertValidSchema, BadRequestError, cacheableAjv, indexedPredicateKeyword, streamValidator, ValidationError, type ErrorElement, ExtensionLedger, type RegisterOptions } from '../../kernel/index.js';
import { keyStrategy, newUuidKey, type DefinitionProblem, type FieldDefinition, type StreamDefinition } from '../streams/index.js';
import type {
  EntryAttributes,
  FieldsService,
  FieldType,
  PrepareOptions,
  RelationInfo,
  RuleDefinition,
  VerifyContext,
} from './contracts.js';
import { mapAjvErrors } from './error-mapping.js';
import { errorElement, FILLED_MESSAGE, PRESENT_MESSAGE, REQUIRED_MESSAGE } from './messages.js';
import { DefinitionIssue, DefinitionIssues, PlanCompiler, TEST, type FieldPlan, type PlanEnvironment, type Predicate, type StreamPlan } from './stream-plan.js';
import { INCREMENT, plainDefault } from './defaults.js';

// strictNumbers: JSON's 1e400 parses to Infinity, which would pass `integer` and be stored as
// null; non-finite numbers fail the type like any other wrong value. validateSchema: done by
// `compile` with a validator from the code cache. passContext: predicates reach the code as
// `this.p` (TEST).
const AJV_OPTIONS: Options = { allErrors: true, verbose: true, strictNumbers: true, validateSchema: false, passContext: true };

const revivedFields = new WeakMap<StreamPlan, FieldPlan[]>();
/**
 * The fields of a plan whose string values `revive` looks at: a type that normalizes, whose
 * stored form is not text (a text field's schema says `type: "string"`: nothing to cast on
 * read). Found once per plan, not per entry read (issue #33: revive runs for every entry of a
 * boot's load).
 */
function revivedOf(plan: StreamPlan): FieldPlan[] {
  let fields = revivedFields.get(plan);
  if (fields === undefined) {
    fields = plan.fields.filter((f) => f.type.normalize !== undefined && (f.type.schema(f.field, plan.context) as { type?: unknown }).type !== 'string');
    revivedFields.set(plan, fields);
  }
  return fields;
}

/** What `revive` reports for an entry whose values all fit (shared: nothing is ever added to it). */
const NO_PROBLEMS: readonly string[] = Object.freeze([]);

/** The most attributes one entry may have (declared and undeclared). */
export const MAX_ATTRIBUTES = 1000;

/** Type names: `^[a-z][a-z0-9_]*$` (spec: addon types). */
export const TYPE_NAME = /^[a-z][a-z0-9_]*$/;
const RULE_NAME = /^[a-z][a-z0-9_]*$/;
/** Attribute names that would reach an object's prototype if assigned. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const ATTRIBUTE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface FieldsServiceOptions {
  /** Application timezone (config `streams.timezone`). */
  timezone: string;
  /** Stream definitions by id (the registry), for relationships and nested stream shapes. */
  resolveStream(id: string): StreamDefinition | undefined;
  /** The kernel's ledger of registrations (a second type or rule of one name is refused naming both plugins). */
  extensions?: ExtensionLedger;
}

/** Laravel's `required`: null, an empty (blank) string and an empty list are missing. */
function isBlank(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  return Array.isArray(value) && value.length === 0;
}

/** `__proto__`, `constructor`, `prototype` anywhere in a value: never let them reach an object. */
function forbiddenKeyIn(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = forbiddenKeyIn(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return key;
    const found = forbiddenKeyIn((value as Record<string, unknown>)[key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** A number as JSON writes it (`1.5`, `-3`; not `01`, `1.`, `1e3`): an undeclared nested filter value read as a number. */
const CANONICAL_NUMBER = /^-?(0|[1-9]\d{0,15})(\.\d{1,15})?$/;

export class FieldsRegistry implements FieldsService {
  private readonly types = new Map<string, FieldType>();
  private readonly rules = new Map<string, RuleDefinition>();
  private readonly plans = new WeakMap<StreamDefinition, StreamPlan>();
  private ajvInstance: Ajv | undefined;
  private readonly planEnvironment: PlanEnvironment;

  constructor(private readonly options: FieldsServiceOptions) {
    this.ledger = options.extensions ?? new ExtensionLedger();
    this.planEnvironment = {
      compile: (schema, predicates) => this.compile(schema, predicates),
      types: this.types,
      rules: this.rules,
      timezone: options.timezone,
      resolveStream: (id) => options.resolveStream(id),
    };
  }

  /**
   * Made on first use: a boot whose plans all come from the ajv code cache never builds one
   * (with its formats, a few ms; issue #33).
   */
  private ajv(): Ajv {
    if (this.ajvInstance === undefined) {
      this.ajvInstance = cacheableAjv(AJV_OPTIONS);
      this.ajvInstance.addKeyword(indexedPredicateKeyword(TEST));
    }
    return this.ajvInstance;
  }

  /**
   * A schema of a plan (a stream's whole entry schema, or one field's for `matches`; a field
   * type's may come from an addon), bound to its predicates. Its code comes from the ajv code
   * cache when it is plain JSON; the check ajv would make runs only where ajv compiles (a file
   * in the cache is the code of a schema that passed it). A field's schema too: the first
   * `matches` of a boot's load (a `select` value revived from a file) built the ajv instance and
   * compiled, ~16 ms of a 100k boot on Node 20 (issue #33).
   */
  private compile(schema: Record<string, unknown>, predicates: readonly Predicate[]): ValidateFunction {
    const checked = (): Ajv => {
      assertValidSchema(schema);
      return this.ajv();
    };
    let validate: ValidateFunction;
    try {
      validate = streamValidator(schema, AJV_OPTIONS, checked);
    } finally {
      // Plans are cached per definition object; ajv's own cache would only grow.
      this.ajvInstance?.removeSchema(schema);
    }
    const context = { p: predicates };
    const bound = ((data: unknown) => {
      const valid = validate.call(context, data) as boolean;
      bound.errors = validate.errors;
      return valid;
    }) as ValidateFunction;
    return bound;
  }

  get timezone(): string {
    return this.options.timezone;
  }

  private readonly ledger: ExtensionLedger;

  registerType(type: FieldType, options?: RegisterOptions): void {
    if (!TYPE_NAME.test(type.name)) throw new Error(`Field type name [${type.name}] must match ${TYPE_NAME}.`);
    if (typeof type.schema !== 'function') throw new Error(`Field type [${type.name}] has no schema().`);
    this.ledger.claim('field type', type.name, options);
    this.types.set(type.name, type);
  }

  getType(name: string): FieldType | undefined {
    return this.types.get(name);
  }

  /** Every registered type name (docs, diagnostics). */
  typeNames(): string[] {
    return [...this.types.keys()].sort();
  }

  registerRule(rule: RuleDefinition, options?: RegisterOptions): void {
    if (!RULE_NAME.test(rule.name)) throw new Error(`Rule name [${rule.name}] must match ${RULE_NAME}.`);
    this.ledger.claim('rule', rule.name, options);
    this.rules.set(rule.name, rule);
  }

  getRule(name: string): RuleDefinition | undefined {
    return this.rules.get(name);
  }

  /** The compiled plan of a definition, rebuilt when a stream it reads was redefined. */
  plan(stream: StreamDefinition): StreamPlan {
    const cached = this.plans.get(stream);
    if (cached && this.fresh(cached)) return cached;
    let plan: StreamPlan;
    try {
      plan = new PlanCompiler(stream, this.planEnvironment).compile();
    } catch (error) {
      throw new AppError(500, `Stream [${stream.id}] is not usable: ${(error as Error).message}`);
    }
    this.plans.set(stream, plan);
    return plan;
  }

  private fresh(plan: StreamPlan): boolean {
    for (const [id, seen] of plan.deps) if (this.options.resolveStream(id) !== seen) return false;
    return true;
  }

  check(stream: StreamDefinition): DefinitionProblem[] {
    const problems: DefinitionProblem[] = [];
    stream.fields.forEach((field, index) => {
      if (FORBIDDEN_KEYS.has(field.handle)) {
        problems.push({ path: `/fields/${index}/handle`, message: `Field handle [${field.handle}] of stream [${stream.id}] is reserved.` });
        return;
      }
      const type = this.types.get(field.type);
      if (!type) {
        problems.push({
          path: `/fields/${index}/type`,
          message: `Field [${field.handle}] of stream [${stream.id}] has unknown type [${field.type}]; no plugin registers it.`,
        });
        return;
      }
      for (const message of type.check?.(field, stream) ?? []) problems.push({ path: `/fields/${index}/config`, message });
    });
    if (problems.length > 0) return problems;
    try {
      const compiler = new PlanCompiler(stream, this.planEnvironment);
      this.plans.set(stream, compiler.compile());
    } catch (error) {
      // A type that cannot build its schema (unknown item stream...) throws; that is a definition problem too.
      if (error instanceof DefinitionIssues) for (const issue of error.issues) problems.push({ path: issue.path, message: issue.message });
      else if (error instanceof DefinitionIssue) problems.push({ path: error.path, message: error.message });
      else problems.push({ path: '/fields', message: (error as Error).message });
    }
    return problems;
  }

  async prepare(stream: StreamDefinition, input: EntryAttributes, options: PrepareOptions): Promise<EntryAttributes> {
    const plan = this.plan(stream);
    const { context } = plan;
    const patch = options.mode === 'patch';
    const names = Object.keys(input);
    // Streams keep undeclared attributes; not without bound (60k of them were stored once).
    if (names.length > MAX_ATTRIBUTES) throw new BadRequestError(`An entry may have at most ${MAX_ATTRIBUTES} attributes; this one has ${names.length}.`);
    for (const key of names) {
      if (FORBIDDEN_KEYS.has(key) || !ATTRIBUTE.test(key)) throw new BadRequestError(`Attribute name [${key}] is not allowed.`, { field: key });
      const nested = forbiddenKeyIn(input[key]);
      if (nested) throw new BadRequestError(`Attribute [${key}] holds a key [${nested}] that is not allowed.`, { field: key });
    }

    const out: EntryAttributes = {};
    // Undeclared attributes are kept as given (streams allow them), declared ones are replaced below.
    for (const key of Object.keys(input)) if (!plan.byHandle.has(key)) out[key] = input[key];
    const candidate: Record<string, unknown> = {};
    const errors: Array<{ index: number; element: ErrorElement }> = [];
    const keyName = stream.config.key_name;

    for (const f of plan.fields) {
      const handle = f.field.handle;
      let value: unknown = Object.hasOwn(input, handle) ? input[handle] : undefined;
      if (value === undefined && !patch && f.field.config.default !== undefined) value = await this.defaultFor(f, plan, options);
      const isKey = handle === keyName;
      if (value === undefined && isKey && options.mode === 'create' && keyStrategy(stream) === 'uuid') value = newUuidKey();
      if (value === undefined) {
        if (f.required && !f.sometimes && !patch && !(isKey && keyStrategy(stream) === 'increment')) {
          errors.push({ index: f.index, element: errorElement(REQUIRED_MESSAGE, handle, 'required') });
        } else if (f.present && !patch && !isKey) {
          errors.push({ index: f.index, element: errorElement(PRESENT_MESSAGE, handle, 'present') });
        }
        continue;
      }
      const normalized = value === null ? null : f.type.normalize ? f.type.normalize(value, f.field, context) : value;
      if (f.required && isBlank(normalized)) {
        errors.push({ index: f.index, element: errorElement(REQUIRED_MESSAGE, handle, 'required') });
        continue;
      }
      if (normalized === null) {
        // Nullable means "no rules for null", except `filled`: present and null is not filled.
        if (f.filled) errors.push({ index: f.index, element: errorElement(FILLED_MESSAGE, handle, 'filled') });
        else out[handle] = null;
        continue;
      }
      candidate[handle] = normalized;
    }

    if (!plan.validate(candidate)) {
      const mapped = mapAjvErrors(plan.validate.errors ?? [], (field) => {
        const f = plan.byHandle.get(field);
        return f ? (f.type.rule ?? f.type.name) : 'invalid';
      });
      // One message per failing value: a value of the wrong type is not also measured by
      // its size rules (min, max...); the type's message says what is wrong.
      const typeFailed = new Set<string>();
      for (const element of mapped) {
        const field = String(element.meta?.field ?? '');
        const f = plan.byHandle.get(field);
        if (f && element.meta?.rule === (f.type.rule ?? f.type.name)) typeFailed.add(field);
      }
      for (const element of mapped) {
        const field = String(element.meta?.field ?? '');
        const f = plan.byHandle.get(field);
        if (typeFailed.has(field) && element.meta?.rule !== (f!.type.rule ?? f!.type.name)) continue;
        const top = field.split('.')[0]!;
        errors.push({ index: plan.byHandle.get(top)?.index ?? Number.MAX_SAFE_INTEGER, element });
      }
    }
    // Fields that failed above are neither cast nor checked further; the others still are,
    // so one answer lists every failed rule (Laravel reports `unique` next to `max`).
    const failed = new Set(errors.map((e) => String(e.element.meta?.field ?? '').split('.')[0]!));

    // Cast to the stored form (hash is async; most casts are not).
    const pending: Array<Promise<void>> = [];
    for (const handle of Object.keys(candidate)) {
      if (failed.has(handle)) {
        delete candidate[handle];
        continue;
      }
      const f = plan.byHandle.get(handle)!;
      const cast = f.type.cast ? f.type.cast(candidate[handle], f.field, context) : candidate[handle];
      if (cast instanceof Promise) pending.push(cast.then((v) => void (out[handle] = v)));
      else out[handle] = cast;
    }
    if (pending.length > 0) await Promise.all(pending);

    const result: EntryAttributes = patch && options.existing ? { ...options.existing, ...out } : out;
    errors.push(...(await this.verify(plan, candidate, result, options)));
    if (errors.length > 0) throw new ValidationError(sortErrors(errors));
    return result;
  }

  /** Async checks (unique, relationship existence) on the cast values, all at once. */
  private async verify(
    plan: StreamPlan,
    candidate: Record<string, unknown>,
    attributes: EntryAttributes,
    options: PrepareOptions,
  ): Promise<Array<{ index: number; element: ErrorElement }>> {
    const fields = plan.verified.filter((f) => Object.hasOwn(candidate, f.field.handle));
    if (fields.length === 0) return [];
    const context: VerifyContext = { ...plan.context, lookup: options.lookup, key: options.key, mode: options.mode, attributes };
    const results = await Promise.all(
      fields.map(async (f) => {
        const value = attributes[f.field.handle];
        const found: ErrorElement[] = [];
        for (const v of f.verifyRules) {
          if (!(await v.rule.verify!(value, v.args, f.field, context))) found.push(errorElement(v.message, f.field.handle, v.name));
        }
        if (f.type.verify) {
          for (const failure of await f.type.verify(value, f.field, context)) {
            const at = failure.path ? `${f.field.handle}.${failure.path}` : f.field.handle;
            found.push(errorElement(failure.message, at, failure.rule));
          }
        }
        return found.map((element) => ({ index: f.index, element }));
      }),
    );
    return results.flat();
  }

  private async defaultFor(f: FieldPlan, plan: StreamPlan, options: PrepareOptions): Promise<unknown> {
    if (f.field.config.default === undefined) return undefined;
    // `increment` means the same on every type (decisions.md: a key field's default), not the text "increment".
    const value =
      f.field.config.default === 'increment'
        ? INCREMENT
        : f.type.defaultValue
          ? f.type.defaultValue(f.field, plan.context)
          : plainDefault(f.field.config.default);
    if (value !== INCREMENT) return value;
    // The key field's increment belongs to the entries layer (it holds the lock on the stream).
    if (f.field.handle === plan.stream.config.key_name || !options.lookup.max) return undefined;
    const max = await options.lookup.max(plan.stream.id, f.field.handle);
    const n = typeof max === 'number' ? max : typeof max === 'string' && /^-?\d+$/.test(max) ? Number(max) : 0;
    return Math.max(0, Math.floor(n)) + 1;
  }

  serialize(stream: StreamDefinition, entry: EntryAttributes): Record<string, unknown> {
    const plan = this.plan(stream);
    // Plain streams: nothing per field to do; a shallow copy so callers may add keys (relations)
    // without touching the stored entry.
    if (plan.plain) return { ...entry };
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(entry)) if (!plan.protectedHandles.has(key)) out[key] = entry[key];
    for (const f of plan.serialized) {
      const value = out[f.field.handle];
      if (value !== undefined && value !== null) out[f.field.handle] = f.type.serialize!(value, f.field, plan.context);
    }
    return out;
  }

  castFilterValue(stream: StreamDefinition, field: string, value: unknown, operator?: string): unknown {
    const plan = this.plan(stream);
    const target = this.filterTarget(plan, field);
    const op = operator?.toUpperCase();
    if (!target) {
      // A path into a declared field with no declared type at its end (`where[ob.lat]=1.5` on a
      // plain `object`): a number written as JSON writes it is read as that number, as the
      // stored value is one; anything else stays text. Declare `properties` to be exact.
      const dot = field.indexOf('.');
      if (dot <= 0 || !plan.byHandle.has(field.slice(0, dot)) || op === 'LIKE' || op === 'NOT LIKE') return value;
      const loose = (v: unknown): unknown => (typeof v === 'string' && CANONICAL_NUMBER.test(v) ? Number(v) : v);
      return Array.isArray(value) ? value.map(loose) : loose(value);
    }
    if (op === 'LIKE' || op === 'NOT LIKE') return Array.isArray(value) ? value.map((v) => String(v)) : String(value);
    const { definition, type } = target;
    const one = (v: unknown): unknown => {
      if (v === null || v === undefined) return v;
      let cast: unknown;
      try {
        cast = type.castFilter ? type.castFilter(v, definition, plan.context) : type.normalize ? type.normalize(v, definition, plan.context) : v;
      } catch (error) {
        if (error instanceof AppError) throw error;
        throw new BadRequestError(`The filter value for field [${field}] is not valid: ${(error as Error).message}`, { field });
      }
      // `undefined` (or NaN) from a cast means "cannot cast": a 400, never a filter that silently matches nothing.
      if (cast === undefined || (typeof cast === 'number' && Number.isNaN(cast))) {
        throw new BadRequestError(`The filter value for field [${field}] is not a valid ${definition.type} value.`, { field, rule: definition.type });
      }
      return cast;
    };
    return Array.isArray(value) ? value.map(one) : one(value);
  }

  /**
   * A stored entry read from a hand-written file, typed: a string in a non-text field that
   * the type's lexical forms turn into a valid value (`"12"` -> 12, `yes` -> true) is cast;
   * anything else that does not match its field is reported (one line per field) and kept.
   * Only string values are looked at, and only a change of kind counts, so loading stays
   * cheap and text is never rewritten.
   */
  revive(stream: StreamDefinition, entry: EntryAttributes): { entry: EntryAttributes; problems: readonly string[] } {
    const plan = this.plan(stream);
    let out: EntryAttributes | undefined;
    let problems: string[] | undefined;
    // Text fields keep exactly what was written (no trimming on read, no check): not in the list.
    for (const f of revivedOf(plan)) {
      const value = entry[f.field.handle];
      if (typeof value !== 'string') continue;
      const cast = f.type.normalize!(value, f.field, plan.context);
      if (typeof cast !== 'string' && cast !== null && cast !== undefined && plan.context.toolkit.matches(f.field, cast)) {
        out ??= { ...entry };
        out[f.field.handle] = cast;
      } else if (!plan.context.toolkit.matches(f.field, value)) {
        (problems ??= []).push(`${f.field.handle}: ${JSON.stringify(value.slice(0, 40))} is not a valid ${f.field.type}`);
      }
    }
    return { entry: out ?? entry, problems: problems ?? NO_PROBLEMS };
  }

  /**
   * The field definition and type a filter path is cast by: a top-level field, or a
   * property declared in an `object` field's `config.properties` (`where[ob.lat]=1.5`
   * compares the number 1.5). Undefined for paths nothing declares.
   */
  private filterTarget(plan: StreamPlan, path: string): { definition: FieldDefinition; type: FieldType } | undefined {
    const top = plan.byHandle.get(path);
    if (top) return { definition: top.field, type: top.type };
    const parts = path.split('.');
    let current = plan.byHandle.get(parts[0]!)?.field;
    for (let i = 1; current !== undefined && i < parts.length; i++) {
      const properties = current.config.properties;
      if (properties === undefined || (current.type !== 'object' && current.type !== 'json')) return undefined;
      current = plan.context.toolkit.fields(properties).find((f) => f.handle === parts[i]);
    }
    if (current === undefined || current === plan.byHandle.get(parts[0]!)?.field) return undefined;
    const type = this.types.get(current.type);
    return type ? { definition: current, type } : undefined;
  }

  relations(stream: StreamDefinition): RelationInfo[] {
    return this.plan(stream).relations;
  }

  links(stream: StreamDefinition, entry: EntryAttributes): Record<string, string> {
    const plan = this.plan(stream);
    const out: Record<string, string> = {};
    for (const f of plan.linked) {
      const value = entry[f.field.handle];
      if (value === undefined || value === null) continue;
      const link = f.type.link!(value, f.field, plan.context);
      if (link) out[f.field.handle] = link;
    }
    return out;
  }
}

function sortErrors(errors: Array<{ index: number; element: ErrorElement }>): ErrorElement[] {
  return errors
    .map((e, order) => ({ ...e, order }))
    .sort((a, b) => a.index - b.index || a.order - b.order)
    .map((e) => e.element);
}
