import type { FieldDefinition, RouteDefinition, SourceConfig, StreamConfig, StreamDefinition } from './types.js';

/** Keys of a definition the core understands; anything else is an addon extension. */
const KNOWN_KEYS = new Set([
  '$schema', 'id', 'handle', 'name', 'description', 'docs', 'extends', 'config', 'fields',
  'rules', 'route', 'data', 'routes', 'ui',
]);

const FIELD_KNOWN = new Set(['handle', 'type', 'required', 'unique', 'protected', 'rules', 'config']);

export interface NormalizeDefaults {
  defaultSource: string;
  defaultFormat: string;
}

/** `books` -> `Books`, `book_authors` -> `Book Authors`, `core.streams` -> `Core Streams`. */
export function titleCase(id: string): string {
  return id
    .split(/[_.\-\s]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ');
}

function splitRules(rules: unknown): string[] {
  if (rules === undefined || rules === null) return [];
  const list = Array.isArray(rules) ? (rules as string[]) : String(rules).split('|');
  return list.map((r) => r.trim()).filter((r) => r.length > 0);
}

function normalizeField(handle: string, value: unknown): FieldDefinition {
  const body: Record<string, unknown> = typeof value === 'string' ? { type: value } : { ...(value as Record<string, unknown>) };
  const field: FieldDefinition = {
    handle,
    type: typeof body.type === 'string' ? body.type : 'string',
    required: body.required === true,
    unique: body.unique === true,
    protected: body.protected === true,
    rules: splitRules(body.rules),
    config: body.config && typeof body.config === 'object' ? { ...(body.config as Record<string, unknown>) } : {},
  };
  for (const [key, v] of Object.entries(body)) if (!FIELD_KNOWN.has(key)) field[key] = v;
  return field;
}

/** The three `fields` forms (imports already resolved) into one ordered list. */
export function normalizeFields(fields: unknown): FieldDefinition[] {
  if (Array.isArray(fields)) {
    return fields.map((f) => normalizeField(String((f as Record<string, unknown>).handle), f));
  }
  if (fields && typeof fields === 'object') {
    return Object.entries(fields as Record<string, unknown>).map(([handle, f]) => normalizeField(handle, f));
  }
  return [];
}

function normalizeRoutes(id: string, raw: Record<string, unknown>): RouteDefinition[] {
  const routes: RouteDefinition[] = [];
  const add = (handle: string, value: unknown): void => {
    const body: Record<string, unknown> = typeof value === 'string' ? { uri: value } : { ...(value as Record<string, unknown>) };
    const middleware = body.middleware === undefined ? undefined : splitRules(body.middleware);
    let constraints = body.constraints as RouteDefinition['constraints'] | Array<Record<string, string>> | undefined;
    if (Array.isArray(constraints)) constraints = Object.assign({}, ...constraints) as Record<string, string>;
    const route: RouteDefinition = {
      ...body,
      handle: typeof body.handle === 'string' ? body.handle : handle,
      uri: String(body.uri ?? ''),
      verb: typeof body.verb === 'string' ? body.verb.toLowerCase() : 'any',
      ...(middleware ? { middleware } : {}),
      ...(constraints ? { constraints } : {}),
    };
    route.as = typeof body.as === 'string' ? body.as : `${id}.${route.handle}`;
    routes.push(route);
  };
  if (Array.isArray(raw.routes)) raw.routes.forEach((r, i) => add(String((r as RouteDefinition).handle ?? i), r));
  else if (raw.routes && typeof raw.routes === 'object') {
    for (const [handle, r] of Object.entries(raw.routes as Record<string, unknown>)) add(handle, r);
  }
  // The `route` shorthand is one `view` route; an explicit `view` route wins.
  if (typeof raw.route === 'string' && !routes.some((r) => r.handle === 'view')) add('view', { uri: raw.route });
  return routes;
}

/**
 * Build a normalized definition from a raw one whose imports are resolved
 * (`resolved.fields`) and whose parent, if any, is already normalized.
 */
export function normalizeDefinition(
  id: string,
  raw: Record<string, unknown>,
  resolvedFields: unknown,
  parent: StreamDefinition | undefined,
  defaults: NormalizeDefaults,
): StreamDefinition {
  const ownConfig = (raw.config ?? {}) as Record<string, unknown>;
  const parentConfig = (parent?.config ?? {}) as Record<string, unknown>;
  const source: SourceConfig = {
    type: defaults.defaultSource,
    ...(defaults.defaultSource === 'filebase' ? { format: defaults.defaultFormat } : {}),
    ...((parentConfig.source as SourceConfig | undefined) ?? {}),
    ...((ownConfig.source as SourceConfig | undefined) ?? {}),
  };
  if (source.type === 'filebase' && source.format === undefined) source.format = defaults.defaultFormat;
  const config: StreamConfig = {
    ...parentConfig,
    ...ownConfig,
    key_name: (ownConfig.key_name ?? parentConfig.key_name ?? 'id') as string,
    source,
  };

  // Parent fields keep their position; a child field of the same handle replaces it.
  const ownFields = normalizeFields(resolvedFields);
  const fields = [...(parent?.fields ?? [])];
  for (const field of ownFields) {
    const at = fields.findIndex((f) => f.handle === field.handle);
    if (at >= 0) fields[at] = field;
    else fields.push(field);
  }

  const rules: Record<string, string[]> = { ...(parent?.rules ?? {}) };
  for (const [handle, value] of Object.entries((raw.rules ?? {}) as Record<string, unknown>)) rules[handle] = splitRules(value);

  const extra: Record<string, unknown> = { ...(parent?.extra ?? {}) };
  for (const [key, value] of Object.entries(raw)) if (!KNOWN_KEYS.has(key)) extra[key] = value;

  const routes = normalizeRoutes(id, raw);
  const definition: StreamDefinition = {
    id,
    name: typeof raw.name === 'string' ? raw.name : titleCase(id),
    config,
    fields,
    rules,
    routes: routes.length > 0 ? routes : (parent?.routes ?? []),
    extra,
    raw,
  };
  if (typeof raw.description === 'string') definition.description = raw.description;
  else if (parent?.description) definition.description = parent.description;
  if (typeof raw.extends === 'string') definition.extends = raw.extends;
  if (raw.data !== undefined) definition.data = raw.data;
  return definition;
}
