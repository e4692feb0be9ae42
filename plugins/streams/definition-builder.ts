import type { ValidateFunction } from 'ajv';
import { bootValidator, describeAjvError, type FileRoots, type Hooks } from '../../kernel/index.js';
import type { CheckContext, DefinitionCheck, DefinitionProblem, StreamRegistry } from './contracts.js';
import { definitionSchema } from './definition-schema.js';
import { DefinitionIssue, resolveFieldImports } from './imports.js';
import { unknownKeyWarnings } from './unknown-keys.js';
import { normalizeDefinition, type NormalizeDefaults } from './normalize.js';
import type { StreamDefinition } from './types.js';

/** Thrown with every problem of one definition; the caller decides boot error or 409. */
export class DefinitionProblems extends Error {
  constructor(readonly problems: DefinitionProblem[], readonly file?: string) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
    this.name = 'DefinitionProblems';
  }
}

export interface BuildInput {
  raw: Record<string, unknown>;
  /** Id known from the URL or file name (the definition's own `id`/`handle` wins over a file name). */
  id?: string;
  /** When set, this id wins over the body's (API PUT/PATCH path). */
  forceId?: boolean;
  file?: string;
  /** Finds an already-built parent for `extends`. */
  parentOf: (id: string) => StreamDefinition | undefined;
  /** Who wrote it (checks may be stricter with API payloads); default `store`. */
  origin?: CheckContext['origin'];
}

/**
 * Turns raw definitions into normalized ones: `definition.loading` listeners, id,
 * imports, one JSON Schema (with addon extensions), `extends`, normalization, then the
 * semantic checks other plugins registered.
 */
export class DefinitionBuilder {
  private validator?: ValidateFunction;
  private readonly extensions: Record<string, Record<string, unknown>> = {};
  readonly checks: DefinitionCheck[] = [];

  constructor(
    private readonly root: string,
    /** The definitions folder: where imports of API payloads must stay. */
    private readonly definitionsFolder: string,
    private readonly hooks: Hooks,
    private readonly defaults: NormalizeDefaults,
    /** What imported files must obey (issue #27): the roots links may lead into, the size limit. */
    private readonly files: { roots?: FileRoots; maxBytes?: number } = {},
  ) {}

  /** The top-level keys the spec and the loaded plugins declare. */
  private knownKeys(): string[] {
    return Object.keys((definitionSchema(this.extensions) as { properties: Record<string, unknown> }).properties);
  }

  /** Collect addon schema extensions; called once at boot before anything is built. */
  async collectExtensions(): Promise<void> {
    await this.hooks.emit('definition.extend', {
      extend: (key, schema) => {
        this.extensions[key] = schema;
        this.validator = undefined;
      },
    });
  }

  private validate(): ValidateFunction {
    // A schema of ours (and the extensions addons add to it), compiled once per boot: skipping the
    // check of the schema itself against the JSON Schema meta-schema and the optimizing pass of
    // ajv's code generation takes its compile from about 100 ms to 45 (boot time, issue #16);
    // loading that code from the cache after the first boot, to a few (issue #33).
    this.validator ??= bootValidator(definitionSchema(this.extensions), 'definition', { allErrors: true, validateSchema: false, code: { optimize: false } });
    return this.validator;
  }

  async build(input: BuildInput, registry: StreamRegistry): Promise<StreamDefinition> {
    const raw = structuredClone(input.raw);
    await this.hooks.emit('definition.loading', { id: input.id, file: input.file, definition: raw });
    const own = typeof raw.id === 'string' ? raw.id : typeof raw.handle === 'string' ? raw.handle : undefined;
    const id = input.forceId ? input.id : (own ?? input.id);
    if (id === undefined) throw new DefinitionProblems([{ path: '/id', message: 'is required' }], input.file);
    // Keep `id` first in the stored file, as authors write it; a legacy `handle` stays as written.
    const legacyHandle = typeof raw.handle === 'string' && raw.id === undefined && !input.forceId;
    const stored: Record<string, unknown> = legacyHandle ? { ...raw } : { id, ...raw };
    if (!legacyHandle) stored.id = id;

    let resolvedFields: unknown;
    try {
      resolvedFields = await resolveFieldImports(stored.fields, {
        root: this.root,
        confine: input.origin === 'api' ? this.definitionsFolder : undefined,
        roots: this.files.roots,
        maxBytes: this.files.maxBytes,
      });
    } catch (error) {
      if (error instanceof DefinitionIssue) throw new DefinitionProblems([{ path: error.path, message: error.message }], input.file);
      throw error;
    }
    const candidate = { ...stored, fields: resolvedFields ?? {} };
    const validate = this.validate();
    if (!validate(candidate)) {
      throw new DefinitionProblems(schemaProblems(validate), input.file);
    }

    let parent: StreamDefinition | undefined;
    if (typeof stored.extends === 'string') {
      if (stored.extends === id) throw new DefinitionProblems([{ path: '/extends', message: 'a stream cannot extend itself' }], input.file);
      parent = input.parentOf(stored.extends);
      if (!parent) {
        throw new DefinitionProblems([{ path: '/extends', message: `extends unknown stream [${stored.extends}]` }], input.file);
      }
      if (ancestry(parent, input.parentOf).includes(id)) {
        throw new DefinitionProblems([{ path: '/extends', message: `extends [${stored.extends}], which extends [${id}]: a cycle` }], input.file);
      }
    }

    const definition = normalizeDefinition(id, stored, resolvedFields, parent, this.defaults);
    if (input.file) definition.file = input.file;
    const warnings = unknownKeyWarnings(stored, this.knownKeys());
    if (warnings.length > 0) definition.warnings = warnings;
    const duplicate = firstDuplicateHandle(resolvedFields);
    const problems: DefinitionProblem[] = duplicate ? [{ path: '/fields', message: `field [${duplicate}] is defined twice` }] : [];
    const context: CheckContext = { origin: input.origin ?? 'store' };
    for (const check of this.checks) {
      for (const problem of check(definition, registry, context)) problems.push({ ...problem, path: pathInFile(problem.path, definition, resolvedFields) });
    }
    if (problems.length > 0) throw new DefinitionProblems(problems, input.file);
    await this.hooks.emit('definition.loaded', { id, definition: definition as unknown as Record<string, unknown> });
    return definition;
  }
}

function schemaProblems(validate: ValidateFunction): DefinitionProblem[] {
  const errors = validate.errors ?? [];
  // anyOf/oneOf/if wrappers and the branches that did not apply report on ancestors of
  // the real culprit; keep only the leaf paths, one message per path.
  let concrete = errors.filter((e) => !['anyOf', 'oneOf', 'if', 'not', 'propertyNames'].includes(e.keyword));
  // A `type` error only says a branch of a union did not apply when another error sits
  // at the same path or below it.
  concrete = concrete.filter(
    (e) => e.keyword !== 'type' || !concrete.some((o) => o.keyword !== 'type' && (o.instancePath === e.instancePath || o.instancePath.startsWith(`${e.instancePath}/`))),
  );
  const described = (concrete.length > 0 ? concrete : errors).map((e) => describeAjvError(e));
  const problems: DefinitionProblem[] = [];
  const seen = new Set<string>();
  for (const item of described) {
    const isAncestor = described.some((other) => other.path !== item.path && other.path.startsWith(`${item.path === '/' ? '' : item.path}/`));
    if (isAncestor || seen.has(item.path)) continue;
    seen.add(item.path);
    problems.push(item);
  }
  return problems;
}

function ancestry(definition: StreamDefinition, parentOf: (id: string) => StreamDefinition | undefined): string[] {
  const chain: string[] = [];
  let current: StreamDefinition | undefined = definition;
  while (current && !chain.includes(current.id)) {
    chain.push(current.id);
    current = current.extends ? parentOf(current.extends) : undefined;
  }
  return chain;
}

/** Only the list form can repeat a handle (object keys are unique by construction). */
function firstDuplicateHandle(fields: unknown): string | undefined {
  if (!Array.isArray(fields)) return undefined;
  const seen = new Set<string>();
  for (const field of fields as Array<{ handle?: string }>) {
    if (field.handle === undefined) continue;
    if (seen.has(field.handle)) return field.handle;
    seen.add(field.handle);
  }
  return undefined;
}

/**
 * Checks report field problems by position in the normalized list (`/fields/2/rules/0`);
 * point at where the author wrote it instead: the handle in the object form
 * (`/fields/title`), the own position when a parent's fields come first, and the whole
 * `rules` string when rules were written pipe-delimited.
 */
function pathInFile(problemPath: string, definition: StreamDefinition, ownFields: unknown): string {
  const match = /^\/fields\/(\d+)(\/.*)?$/.exec(problemPath);
  if (!match) return problemPath;
  const handle = definition.fields[Number(match[1])]?.handle;
  if (handle === undefined || ownFields === null || typeof ownFields !== 'object') return problemPath;
  let at: string;
  let written: unknown;
  if (Array.isArray(ownFields)) {
    const index = ownFields.findIndex((f) => (f as { handle?: unknown })?.handle === handle);
    if (index < 0) return problemPath;
    at = String(index);
    written = ownFields[index];
  } else {
    if (!Object.hasOwn(ownFields, handle)) return problemPath;
    at = handle;
    written = (ownFields as Record<string, unknown>)[handle];
  }
  let rest = match[2] ?? '';
  const rules = written !== null && typeof written === 'object' ? (written as { rules?: unknown }).rules : undefined;
  if (typeof rules === 'string' && /^\/rules\/\d+$/.test(rest)) rest = '/rules';
  return `/fields/${at}${rest}`;
}
