import { hash } from 'node:crypto';
import { AppError, BadRequestError, NotFoundError, ValidationError } from '../../../kernel/index.js';
import type { OrderClause, WhereClause } from '../../entries/index.js';
import { compareEntries, compileWhere } from '../../sources/index.js';
import { definitionToJson, definitionVersion, ID_PATTERN, type DefinitionGuard, type StreamDefinition } from '../../streams/index.js';
import { conditionalReply, envelope } from '../envelope.js';
import { paging, parseListQuery, parseSteps, stepToOrder, stepToWhere } from '../list-params.js';
import type { ApiRequest, EndpointName } from '../contracts.js';
import { json, segment, urlsOf, type EndpointContext, type EndpointHandler, type Urls } from './context.js';
import { pagination } from './pagination.js';
import type { HttpReply } from '../../http/index.js';
import { accessOf, definitionForCaller, type RequestAccess } from '../access.js';

/**
 * Definitions under access rules (issue #28): only administrators write them (401 for the
 * anonymous caller, else 403); others see only the streams they may list or view, without
 * the `access` key and the fields hidden from them (an unseen stream is a 404).
 */
function callerOf(request: ApiRequest): RequestAccess | undefined {
  const access = accessOf(request);
  return access === undefined || access.admin ? undefined : access;
}

function assertAdmin(request: ApiRequest): void {
  const access: RequestAccess | undefined = callerOf(request);
  if (access !== undefined) access.refuse(request);
}

function seen(access: RequestAccess, definition: StreamDefinition): boolean {
  return access.can(definition, 'list') || access.can(definition, 'view');
}

function shownJson(access: RequestAccess | undefined, definition: StreamDefinition): Record<string, unknown> {
  const json = definitionToJson(definition);
  if (access === undefined) return json;
  const scope = access.viewer(definition, 'view') ?? access.viewer(definition, 'list');
  return definitionForCaller(json, scope?.hidden ?? new Set());
}

const ID = new RegExp(ID_PATTERN);

/** A definition's links; `entries` only where the interface serves entries. */
function streamLinks(request: ApiRequest, urls: Urls, id: string, extra = ''): string {
  const stream = `${urls.streams}/${segment(id)}`;
  const entries = request.api.resources.includes('entries') ? `,"entries":${json(`${stream}/entries`)}` : '';
  return `{"self":${json(urls.self)},"streams":${json(urls.streams)},"stream":${json(stream)}${entries}${extra}}`;
}

function assertWritableId(id: string): void {
  if (!ID.test(id)) {
    throw new ValidationError([{ message: `The stream id "${id.slice(0, 60)}" is invalid: it must match ${ID_PATTERN}.`, meta: { field: 'id', rule: 'pattern' } }]);
  }
}

/**
 * `If-Match` / `If-None-Match: *` of a definition write, checked by the registry under its
 * write lock against the stored version (412 when stale; nothing changes).
 */
function guardOf(request: ApiRequest): DefinitionGuard | undefined {
  const ifMatch = request.header('if-match');
  const ifNoneMatch = request.header('if-none-match');
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  return (current) => {
    const tag = current === undefined ? undefined : definitionVersion(current);
    if (ifMatch !== undefined) {
      const holds = tag !== undefined && (ifMatch.trim() === '*' || ifMatch.split(',').some((t) => t.trim() === tag));
      if (!holds) throw new AppError(412, 'The stream definition has changed since that version was read (If-Match); read it again and retry.');
    }
    if (ifNoneMatch !== undefined && ifNoneMatch.trim() === '*' && current !== undefined) {
      throw new AppError(412, 'The stream already exists (If-None-Match).');
    }
  };
}

/** The stream-definition endpoints (meta.stream is the meta-stream, `core.streams` by default). */
export function streamEndpoints(context: EndpointContext): Record<Extract<EndpointName, `streams.${string}`>, EndpointHandler> {
  const { config } = context;
  // The spec: the meta-stream "appears as core.streams" in meta.stream, whatever the
  // `streams_id` setting names it internally.
  const meta = json('core.streams');

  const one = (request: ApiRequest, definition: StreamDefinition, status: number, payload?: unknown): HttpReply => {
    const urls = urlsOf(context, request);
    const id = definition.id;
    const location = status === 201 ? `,"location":${json(`${urls.streams}/${segment(id)}`)}` : '';
    const payloadPart = payload === undefined ? '' : `,"payload":${json(payload)}`;
    // Keys nothing declares (a typo?): accepted, and said (issue #27).
    const warningsPart = definition.warnings === undefined ? '' : `,"warnings":${json(definition.warnings)}`;
    const body = envelope(
      streamLinks(request, urls, id, location),
      `{"parameters":{"stream":${json(request.params.stream ?? id)}},"stream":${meta}${payloadPart}${warningsPart}}`,
      json(shownJson(callerOf(request), definition)),
    );
    // The ETag is the stored version, so the tag read is the one `If-Match` compares with;
    // a non-administrator sees a narrowed body, so its tag names its roles too (it never writes definitions).
    const caller = callerOf(request);
    const etag = caller === undefined ? definitionVersion(definition) : `${definitionVersion(definition).slice(0, -1)}.${hash('sha1', caller.rolesKey, 'base64url').slice(0, 10)}"`;
    if (status === 200 && payload === undefined) return conditionalReply(request, body, undefined, etag);
    return { status, body, headers: status === 201 ? [['Location', `${urls.streams}/${segment(id)}`], ['ETag', etag]] : [['ETag', etag]] };
  };

  return {
    async 'streams.index'(request) {
      const body = request.hasBody ? await request.parsedBody() : undefined;
      const params = new URLSearchParams(request.query);
      const { page, perPage } = paging({ per_page: params.get('per_page') ?? undefined, page: params.get('page') ?? undefined }, config.api, body);
      // The same parameters and the same engine as the entry list: where[...]/constraint[...]
      // and orderBy[...] from the URL, then the body's steps (where, orWhere, orderBy).
      const query = parseListQuery(request.query, config.api);
      const where: WhereClause[] = [...query.where];
      const orderBy: OrderClause[] = [...query.orderBy];
      parseSteps(body?.parameters).forEach((step, index) => {
        const name = `parameters[${index}]`;
        if (step.method === 'where' || step.method === 'orWhere') where.push(stepToWhere(step, name));
        else if (step.method === 'orderBy' || step.method === 'order_by') orderBy.push(stepToOrder(step, name));
        else throw new BadRequestError(`${name}: "${step.method}" is not supported on the stream list (use where, orWhere, orderBy).`, { parameter: name });
      });
      const matches = compileWhere(where);
      const access = callerOf(request);
      const all = context.registry
        .list()
        .filter((definition) => access === undefined || access.can(definition, 'list'))
        .map((definition) => shownJson(access, definition))
        .filter((item) => matches(item))
        .sort(compareEntries(orderBy, 'id'));
      const start = (page - 1) * perPage;
      const slice = all.slice(start, start + perPage);
      const urls = urlsOf(context, request);
      const pages = pagination(request, urls, all.length, page, perPage);
      const text = envelope(
        `{"self":${json(urls.self)},"streams":${json(urls.streams)},${pages.links}}`,
        `{"stream":${meta},${pages.meta}}`,
        json(slice),
      );
      return conditionalReply(request, text);
    },
    async 'streams.store'(request) {
      assertAdmin(request);
      const payload = (await request.parsedBody()) ?? {};
      if (typeof payload.id === 'string') assertWritableId(payload.id);
      const definition = await context.registry.create({ ...payload });
      return one(request, definition, 201, payload);
    },
    async 'streams.show'(request) {
      const definition = context.registry.require(request.params.stream!);
      const access = callerOf(request);
      if (access !== undefined && !seen(access, definition)) throw new NotFoundError(`Stream [${definition.id}] not found.`);
      return one(request, definition, 200);
    },
    async 'streams.update'(request) {
      assertAdmin(request);
      const id = request.params.stream!;
      assertWritableId(id);
      const payload = (await request.parsedBody()) ?? {};
      const { definition, created } = await context.registry.replace(id, { ...payload }, guardOf(request));
      return one(request, definition, created ? 201 : 200, payload);
    },
    async 'streams.patch'(request) {
      assertAdmin(request);
      const id = request.params.stream!;
      assertWritableId(id);
      const payload = (await request.parsedBody()) ?? {};
      const { definition, created } = await context.registry.merge(id, { ...payload }, guardOf(request));
      return one(request, definition, created ? 201 : 200, payload);
    },
    async 'streams.delete'(request) {
      assertAdmin(request);
      const id = request.params.stream!;
      if (!ID.test(id) || context.registry.get(id) === undefined) throw new NotFoundError(`Stream [${id}] not found.`);
      const force = new URLSearchParams(request.query).get('force') === 'true';
      // The registry checks If-Match and then the dependents under its lock.
      if (!(await context.registry.remove(id, { guard: guardOf(request), force }))) throw new NotFoundError(`Stream [${id}] not found.`);
      return { status: 204 };
    },
  };
}

