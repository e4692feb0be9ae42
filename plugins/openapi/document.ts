import type { KernelConfig } from '../../kernel/index.js';
import type { ExtraEndpoint, StreamAction } from '../api/index.js';
import type { FieldsService } from '../fields/index.js';
import type { StreamDefinition, StreamRegistry } from '../streams/index.js';
import { streamSchemas } from './field-schemas.js';

type Schema = Record<string, unknown>;
type Operation = Record<string, unknown>;

/** The error statuses every API operation may answer (each with the error envelope). */
const ERROR_STATUSES = ['400', '404', '405', '409', '412', '413', '414', '429', '500', '503'];
const ERROR_TEXT: Record<string, string> = {
  '400': 'Malformed body or parameter', '401': 'Missing or wrong bearer token', '403': 'An action no access rule of the caller allows, or a field it may not write', '404': 'Unknown stream, entry or path (or denied by the gate)',
  '405': 'Method not served on this path', '409': 'Validation failure, one error per failed rule', '412': 'If-Match does not match the stored version',
  '413': 'Body over http.max_body', '415': 'A body that is neither JSON nor form-encoded', '414': 'Request line too long', '429': 'Throttled', '500': 'Unexpected failure (details only in the log, under X-Request-Id)',
  '503': 'Not ready, or the storage is unavailable', Other: 'Any other error answer (from middleware or hooks of addons)',
};

export interface InterfaceView {
  name: string;
  /** `/api`, or '' for the root. */
  prefix: string;
  resources: readonly string[];
  /** Every middleware spec on this interface: the group's and its own. */
  middleware: readonly string[];
}

export interface DocumentInput {
  config: KernelConfig;
  registry: StreamRegistry;
  fields: FieldsService;
  view: InterfaceView;
  /** `{scheme}://{host}` of the request. */
  baseUrl: string;
  version: string;
  /** Endpoints other plugins added (ApiService.addEndpoint); those with `openapi` are listed. */
  extras?: readonly ExtraEndpoint[];
  /**
   * The caller's access (issue #28): the document then shows the security schemes and only
   * what this caller may do, without the fields hidden from it. Absent: everything.
   */
  access?: CallerView;
}

/** What the document needs of a caller's access. */
export interface CallerView {
  admin: boolean;
  can(definition: StreamDefinition, action: StreamAction): boolean;
  hidden(definition: StreamDefinition): ReadonlySet<string>;
}

/** A stream schema without the hidden fields. */
function withoutFields(schema: Schema, hidden: ReadonlySet<string>): Schema {
  if (hidden.size === 0) return schema;
  const properties = Object.fromEntries(Object.entries((schema.properties as Record<string, Schema>) ?? {}).filter(([name]) => !hidden.has(name)));
  const required = Array.isArray(schema.required) ? (schema.required as string[]).filter((name) => !hidden.has(name)) : undefined;
  return { ...schema, properties, ...(required === undefined ? {} : { required }) };
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema): Schema => ({ 'application/json': { schema } });
const componentName = (id: string): string => id.replace(/[^A-Za-z0-9._-]/g, '_');

/** An OpenAPI 3.1 document of one interface of the API, as currently defined. */
export function buildDocument(input: DocumentInput): Schema {
  const { config, registry, fields, view } = input;
  const names = new Set(view.middleware.map((spec) => spec.split(':')[0]));
  const readonly = names.has('readonly');
  const access = input.access;
  const bearer = names.has('auth.bearer') || access !== undefined;
  const errors = access !== undefined ? ['401', '403', ...ERROR_STATUSES] : bearer ? ['401', ...ERROR_STATUSES] : ERROR_STATUSES;
  const may = (definition: StreamDefinition, action: StreamAction): boolean => access === undefined || access.can(definition, action);
  const admin = access === undefined || access.admin;
  const schemas: Record<string, Schema> = {
    Links: { type: 'object', additionalProperties: { type: ['string', 'null'] } },
    ErrorElement: {
      type: 'object',
      required: ['message'],
      properties: { message: { type: 'string' }, meta: { type: 'object', properties: { field: { type: 'string' }, rule: { type: 'string' } } } },
    },
    ErrorEnvelope: {
      type: 'object',
      required: ['data', 'errors', 'links', 'meta'],
      properties: { data: { type: 'null' }, errors: { type: 'array', minItems: 1, items: ref('ErrorElement') }, links: ref('Links'), meta: { type: 'object' } },
    },
    PageMeta: {
      type: 'object',
      properties: {
        total: { type: 'integer' }, per_page: { type: 'integer' }, last_page: { type: 'integer' }, current_page: { type: 'integer' },
        next_page: { type: ['integer', 'null'] }, previous_page: { type: ['integer', 'null'] }, paging: { type: 'string' },
      },
      required: ['total', 'per_page', 'last_page', 'current_page'],
    },
    Definition: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, name: { type: 'string' }, fields: {}, config: { type: 'object' } } },
    Health: { type: 'object', required: ['status'], properties: { status: { type: 'string' }, checks: { type: 'object', additionalProperties: { type: 'boolean' } } } },
  };
  const envelope = (data: Schema, meta: Schema = { type: 'object' }): Schema => ({
    type: 'object',
    required: ['data', 'errors', 'links', 'meta'],
    properties: { data, errors: { type: 'array', maxItems: 0 }, links: ref('Links'), meta },
  });
  const listMeta: Schema = { allOf: [ref('PageMeta')] };
  const errorResponses = (): Record<string, Schema> => Object.fromEntries(errors.map((status) => [status, { $ref: `#/components/responses/Error${status}` }]));
  const op = (summary: string, success: Record<string, Schema>, extra: Operation = {}): Operation => ({
    summary,
    ...extra,
    responses: {
      ...success,
      ...errorResponses(),
      ...(extra.requestBody ? { '415': { $ref: '#/components/responses/Error415' } } : {}),
      // Middleware and hooks of addons may answer other statuses (403, 423...), always in the error envelope.
      default: { $ref: '#/components/responses/ErrorOther' },
    },
  });
  const ok = (description: string, schema: Schema, conditional = false): Record<string, Schema> => ({
    '200': { description, headers: conditional ? { ETag: { schema: { type: 'string' } } } : undefined, content: json(schema) },
    ...(conditional ? { '304': { description: 'Not modified (If-None-Match matched); no body' } } : {}),
  });
  const created = (schema: Schema): Record<string, Schema> => ({
    '201': { description: 'Created; Location names it', headers: { Location: { schema: { type: 'string', format: 'uri' } } }, content: json(schema) },
  });

  const paths: Record<string, Record<string, Operation>> = {};
  const p = (path: string): Record<string, Operation> => (paths[`${view.prefix}${path}`] ??= {});

  if (view.resources.includes('streams')) {
    const list = p('/streams');
    list.get = op('List stream definitions', ok('Definitions', envelope({ type: 'array', items: ref('Definition') }, listMeta), true), { tags: ['streams'], parameters: listParameters(false) });
    if (!readonly && admin) list.post = op('Create a stream definition', created(envelope(ref('Definition'))), { tags: ['streams'], requestBody: { required: true, content: json(ref('Definition')) } });
    const one = p('/streams/{stream}');
    const streamParam = { name: 'stream', in: 'path', required: true, schema: { type: 'string' } };
    one.get = op('Show a stream definition', ok('The definition', envelope(ref('Definition')), true), { tags: ['streams'], parameters: [streamParam] });
    if (!readonly && admin) {
      one.put = op('Replace (or create) a stream definition', { ...ok('Replaced', envelope(ref('Definition'))), ...created(envelope(ref('Definition'))) }, { tags: ['streams'], parameters: [streamParam], requestBody: { required: true, content: json(ref('Definition')) } });
      one.patch = op('Merge top-level keys of a stream definition', { ...ok('Merged', envelope(ref('Definition'))), ...created(envelope(ref('Definition'))) }, { tags: ['streams'], parameters: [streamParam], requestBody: { required: true, content: json({ type: 'object' }) } });
      one.delete = op('Delete a stream definition (entries stay on disk)', { '204': { description: 'Deleted' } }, { tags: ['streams'], parameters: [streamParam] });
    }
  }

  if (view.resources.includes('entries')) {
    const definitions = [...registry.list()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const keyType = (id: string): Schema => {
      const related = registry.get(id);
      return related ? streamSchemas(related, fields, () => ({})).key : {};
    };
    const shown = definitions.filter((d) => (['list', 'view', 'create', 'update', 'delete'] as const).some((action) => may(d, action)));
    for (const definition of shown) addStream(definition);
    for (const extra of input.extras ?? []) {
      if (extra.openapi === undefined || extra.resource === 'streams' || !extra.pattern.includes(':stream')) continue;
      // The stream's extra endpoints (its changes) are reads of many entries: shown where the caller may list.
      for (const definition of shown.filter((d) => may(d, 'list'))) {
        const path = extra.pattern.replace(':stream', encodeURIComponent(definition.id)).replace(/:([A-Za-z_]+)/g, '{$1}');
        const { responses, ...rest } = extra.openapi as { responses?: Record<string, Schema> };
        p(path)[extra.method.toLowerCase()] = op(String(extra.openapi.summary ?? extra.name), responses ?? {}, { tags: [definition.id], ...rest });
      }
    }

    function addStream(definition: StreamDefinition): void {
      const name = componentName(definition.id);
      const s = streamSchemas(definition, fields, keyType);
      const hidden = access?.hidden(definition) ?? new Set<string>();
      schemas[`${name}.Entry`] = withoutFields(s.read, hidden);
      schemas[`${name}.Input`] = withoutFields(s.write, hidden);
      schemas[`${name}.Patch`] = withoutFields(s.patch, hidden);
      const tags = [definition.id];
      const base = `/streams/${encodeURIComponent(definition.id)}`;
      const entries = p(`${base}/entries`);
      if (may(definition, 'list')) entries.get = op(`List ${definition.id} entries`, ok('A page of entries', envelope({ type: 'array', items: ref(`${name}.Entry`) }, listMeta), true), { tags, parameters: listParameters(true) });
      if (!readonly && may(definition, 'create')) entries.post = op(`Create a ${definition.id} entry`, created(envelope(ref(`${name}.Entry`))), { tags, requestBody: { required: true, content: json(ref(`${name}.Input`)) } });
      const one = p(`${base}/entries/{key}`);
      const keyParam = { name: 'key', in: 'path', required: true, schema: s.key };
      const withParam = { name: 'with', in: 'query', required: false, schema: { type: 'string' }, description: 'Relations to eager-load, comma-separated' };
      if (may(definition, 'view')) one.get = op(`Show a ${definition.id} entry`, ok('The entry', envelope(ref(`${name}.Entry`)), true), { tags, parameters: [keyParam, withParam] });
      if (!readonly) {
        const ifMatch = { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' } };
        const writes = may(definition, 'update') || may(definition, 'create');
        if (writes) one.put = op(`Replace (or create) a ${definition.id} entry`, { ...ok('Replaced', envelope(ref(`${name}.Entry`))), ...created(envelope(ref(`${name}.Entry`))) }, { tags, parameters: [keyParam, ifMatch], requestBody: { required: true, content: json(ref(`${name}.Input`)) } });
        if (writes) one.patch = op(`Update fields of a ${definition.id} entry`, { ...ok('Updated', envelope(ref(`${name}.Entry`))), ...created(envelope(ref(`${name}.Entry`))) }, { tags, parameters: [keyParam, ifMatch], requestBody: { required: true, content: json(ref(`${name}.Patch`)) } });
        if (may(definition, 'delete')) one.delete = op(`Delete a ${definition.id} entry`, { '204': { description: 'Deleted' } }, { tags, parameters: [keyParam, ifMatch] });
        // The query endpoint only reads, but middleware count it as a write (readonly refuses it).
        if (may(definition, 'list')) p(`${base}/query`).post = op(`Query ${definition.id} entries with criteria steps`, ok('A page of entries', envelope({ type: 'array', items: ref(`${name}.Entry`) }, listMeta)), {
          tags,
          parameters: listParameters(false).filter((x) => x.name === 'per_page' || x.name === 'page'),
          requestBody: {
            required: true,
            content: json({ type: 'object', properties: { parameters: { type: 'array', items: { type: 'object', minProperties: 1, maxProperties: 1 } }, per_page: { type: 'integer' }, page: { type: 'integer' } } }),
          },
        });
      }
    }
  }

  for (const extra of input.extras ?? []) {
    if (extra.openapi === undefined || extra.pattern.includes(':stream')) continue;
    if (extra.resource !== undefined && !view.resources.includes(extra.resource)) continue;
    const { responses, ...rest } = extra.openapi as { responses?: Record<string, Schema> };
    p(extra.pattern.replace(/:([A-Za-z_]+)/g, '{$1}'))[extra.method.toLowerCase()] = op(String(extra.openapi.summary ?? extra.name), responses ?? {}, { tags: ['meta'], ...rest });
  }
  p('/openapi.json').get = op('This document', { '200': { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } }, { tags: ['meta'] });
  p('/docs').get = op('An HTML reference page of this document', { '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } }, { tags: ['meta'] });
  const health = (summary: string, statuses: string[]): Operation => ({
    summary,
    tags: ['meta'],
    security: [],
    responses: Object.fromEntries(statuses.map((s) => [s, { description: s === '200' ? 'OK' : 'Not ready', content: json(ref('Health')) }])),
  });
  paths['/healthz'] = { get: health('Liveness', ['200']) };
  paths['/readyz'] = { get: health('Readiness', ['200', '503']) };

  const responses = Object.fromEntries(
    [...errors, '415', 'Other'].map((status) => [`Error${status}`, { description: ERROR_TEXT[status] ?? 'Error', content: json(ref('ErrorEnvelope')) }]),
  );
  const document: Schema = {
    openapi: '3.1.0',
    info: {
      title: 'Streams Kernel API',
      version: input.version,
      description: `The ${view.name} interface: every stream and its entries as currently defined (regenerated whenever a definition changes).`,
    },
    // No `jsonSchemaDialect`: 3.1's default (the OAS base dialect, JSON Schema 2020-12 with the
    // OAS vocabulary) is what the schemas here use, and any other value makes Swagger UI show a
    // warning box on the reference page.
    servers: [{ url: input.baseUrl }],
    paths,
    components: {
      schemas,
      responses,
      ...(access !== undefined
        ? {
            securitySchemes: {
              bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A JWT whose roles claim names the caller\'s roles' },
              apiKey: { type: 'http', scheme: 'bearer', description: 'An API key, sent as Authorization: Bearer <key>' },
            },
          }
        : bearer
          ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } }
          : {}),
    },
  };
  // Under access rules a request without credentials is the anonymous role: `{}` (none) is a choice too.
  if (access !== undefined) document.security = [{ bearer: [] }, { apiKey: [] }, {}];
  else if (bearer) document.security = [{ bearer: [] }];
  void config;
  return document;
}

/** The list parameters; `where`/`constraint`/`orderBy` are deep objects keyed by field. */
function listParameters(withRelations: boolean): Array<Record<string, unknown>> {
  const params: Array<Record<string, unknown>> = [
    { name: 'per_page', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
    { name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
    { name: 'where', in: 'query', required: false, style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: {} }, description: 'where[field]=value' },
    { name: 'constraint', in: 'query', required: false, style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } }, description: 'constraint[field]=operator (=, !=, <, <=, >, >=, LIKE, NOT LIKE, IN, NOT IN, BETWEEN, NOT BETWEEN, NULL, NOT NULL, CONTAINS)' },
    { name: 'orderBy', in: 'query', required: false, style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: { enum: ['asc', 'desc'] } }, description: 'orderBy[field]=asc|desc' },
  ];
  if (withRelations) params.push({ name: 'with', in: 'query', required: false, schema: { type: 'string' }, description: 'Relations to eager-load, comma-separated' });
  return params;
}
