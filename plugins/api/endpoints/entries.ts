import { isAppError, NotFoundError, type AppError } from '../../../kernel/index.js';
import type { ReadScope, WriteCondition } from '../../entries/index.js';
import type { EntryAttributes, RelationInfo } from '../../fields/index.js';
import type { HttpReply } from '../../http/index.js';
import { fieldOf, type StreamDefinition } from '../../streams/index.js';
import type { ApiRequest, EndpointName } from '../contracts.js';
import { conditionalReply, envelope, etagOf } from '../envelope.js';
import { assertNoOperatorKeys, paging, parseListQuery, parseSteps, parseWith } from '../list-params.js';
import { json, segment, urlsOf, type EndpointContext, type EndpointHandler, type Urls } from './context.js';
import { pagination } from './pagination.js';
import { maskedPayload } from './payload-mask.js';
import { ReplyCache } from './reply-cache.js';
import { accessOf, readScopeOf } from '../access.js';
import { narrowEtag, writeCondition } from './entry-access.js';

const RESERVED_LINKS = new Set(['self', 'streams', 'stream', 'entries', 'location', 'first_page', 'next_page', 'previous_page']);

interface StreamInfo {
  /** JSON of the stream id, once. */
  idJson: string;
  idSegment: string;
  /** Relationship fields that may get a link (not protected, not shadowing a standard link). */
  relations: RelationInfo[];
}

/** `If-Match` / `If-None-Match` of a write, checked by the entries layer under the entry's lock. */
function conditionOf(request: ApiRequest): WriteCondition | undefined {
  const ifMatch = request.header('if-match');
  const ifNoneMatch = request.header('if-none-match');
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  // A tag read with hidden fields names the stored version plus the hidden set (narrowEtag): compare the version.
  return { ifMatch: ifMatch?.replace(/\.[A-Za-z0-9_-]+"/g, '"'), ifNoneMatch };
}

/** The entry endpoints and the query endpoint. */
export function entryEndpoints(context: EndpointContext): Record<Extract<EndpointName, `entries.${string}`>, EndpointHandler> {
  const { config } = context;
  // Definitions are immutable values (a change builds a new object): cache per object.
  const infos = new WeakMap<StreamDefinition, StreamInfo>();

  const info = (definition: StreamDefinition): StreamInfo => {
    let found = infos.get(definition);
    if (found === undefined) {
      const relations = context.fields.relations(definition).filter((r) => !RESERVED_LINKS.has(r.handle) && fieldOf(definition, r.handle)?.protected !== true);
      found = { idJson: json(definition.id), idSegment: segment(definition.id), relations };
      infos.set(definition, found);
    }
    return found;
  };

  /** self, streams, stream, entries; the two definition links only where the interface serves definitions. */
  const streamLinks = (request: ApiRequest, urls: Urls, idSegment: string): string => {
    const streamUrl = `${urls.streams}/${idSegment}`;
    const entries = `"entries":${json(`${streamUrl}/entries`)}`;
    if (!request.api.resources.includes('streams')) return `"self":${json(urls.self)},${entries}`;
    return `"self":${json(urls.self)},"streams":${json(urls.streams)},"stream":${json(streamUrl)},${entries}`;
  };

  /** `meta.parameters`: the route's parameters as sent. */
  const parametersOf = (request: ApiRequest): string => {
    const entryParam = request.params.entry;
    const stream = json(request.params.stream ?? '');
    return entryParam === undefined ? `{"stream":${stream}}` : `{"stream":${stream},"entry":${json(entryParam)}}`;
  };

  /**
   * `links.<handle>` of a single-entry show: the field types say where a value points
   * (FieldsService.links: relationship, polymorphic, addon types); a `multiple`
   * relationship links to the related list filtered on its keys.
   */
  const relationLinks = (request: ApiRequest, urls: Urls, definition: StreamDefinition, stream: StreamInfo, entry: EntryAttributes, hidden: ReadonlySet<string> | undefined): string => {
    let out = '';
    const root = `${urls.base}${request.api.prefix}/`;
    const single = context.fields.links(definition, entry);
    // A related stream deleted with ?force=true (or by hand) leaves values without links.
    const gone = (handle: string): boolean => {
      const relation = stream.relations.find((r) => r.handle === handle);
      return relation !== undefined && context.registry.get(relation.stream) === undefined;
    };
    for (const handle of Object.keys(single)) {
      if (RESERVED_LINKS.has(handle) || fieldOf(definition, handle)?.protected === true || gone(handle) || hidden?.has(handle) === true) continue;
      out += `,${json(handle)}:${json(root + single[handle]!)}`;
    }
    for (const relation of stream.relations) {
      if (gone(relation.handle) || hidden?.has(relation.handle) === true) continue;
      const value = entry[relation.handle];
      if (!relation.multiple || !Array.isArray(value) || value.length === 0 || single[relation.handle] !== undefined) continue;
      const key = encodeURIComponent(relation.keyName);
      const filter = value.map((v) => `where[${key}][]=${segment(v)}`).join('&');
      out += `,${json(relation.handle)}:${json(`${urls.streams}/${segment(relation.stream)}/entries?${filter}&constraint[${key}]=IN`)}`;
    }
    return out;
  };

  /**
   * Bodies of recent GET answers with their ETag. A stored entry is replaced, never
   * mutated, on every write, so "same entry objects, same definition, same URL" means
   * the same bytes: the hot path then skips building the envelope and hashing it.
   */
  const replies = new ReplyCache(config.streams.caches.replies_bytes);

  /** One entry in the envelope; 201 replies carry `links.location` and a Location header. */
  const one = (request: ApiRequest, definition: StreamDefinition, entry: EntryAttributes, status: number, payload?: Record<string, unknown>, scope?: ReadScope): HttpReply => {
    const hidden = scope?.hidden;
    const stream = info(definition);
    const urls = urlsOf(context, request);
    const key = context.entries.keyOf(definition, entry);
    const entryUrl = `${urls.streams}/${stream.idSegment}/entries/${segment(key)}`;
    let links = streamLinks(request, urls, stream.idSegment);
    if (status === 201) links += `,"location":${json(entryUrl)}`;
    if (request.api.endpoint === 'entries.show') links += relationLinks(request, urls, definition, stream, entry, hidden);
    const parameters = parametersOf(request);
    const meta =
      payload === undefined
        ? `{"parameters":${parameters},"stream":${stream.idJson}}`
        : `{"parameters":${parameters},"stream":${stream.idJson},"payload":${json(maskedPayload(definition, payload))}}`;
    const body = envelope(`{${links}}`, meta, context.entries.toJson(definition, entry, hidden));
    // The ETag of one entry is its stored version (not a hash of these bytes), so the tag a
    // client read is the one `If-Match` compares with, whatever URL or links it came with;
    // with hidden fields it also names the hidden set (callers who see other fields get other tags).
    const etag = narrowEtag(context.entries.versionOf(entry), hidden);
    if (status === 200 && payload === undefined) {
      replies.remember(request, scope?.key ?? '', urls.base, definition, [entry], 1, body, etag);
      return conditionalReply(request, body, undefined, etag);
    }
    return { status, body, headers: status === 201 ? [['Location', entryUrl], ['ETag', etag]] : [['ETag', etag]] };
  };

  const list = (request: ApiRequest, definition: StreamDefinition, found: EntryAttributes[], total: number, page: number, perPage: number, scope: ReadScope | undefined): HttpReply => {
    const stream = info(definition);
    const urls = urlsOf(context, request);
    const pages = pagination(request, urls, total, page, perPage, request.method === 'GET' || request.method === 'HEAD');
    let data = '[';
    for (let i = 0; i < found.length; i++) data += (i === 0 ? '' : ',') + context.entries.toJson(definition, found[i]!, scope?.hidden);
    data += ']';
    const body = envelope(
      `{${streamLinks(request, urls, stream.idSegment)}${pages.links === '' ? '' : `,${pages.links}`}}`,
      `{"parameters":{"stream":${stream.idJson}},"stream":${stream.idJson},${pages.meta}}`,
      data,
    );
    if (request.method !== 'GET' && request.method !== 'HEAD') return { status: 200, body };
    const etag = etagOf(body);
    replies.remember(request, scope?.key ?? '', urls.base, definition, found, total, body, etag);
    return conditionalReply(request, body, undefined, etag);
  };

  /** A write payload: a flat object without `$` keys (operators to some stores). */
  const payloadOf = async (request: ApiRequest): Promise<EntryAttributes> => {
    const body = (await request.parsedBody()) ?? {};
    assertNoOperatorKeys(body, 'the request body');
    return body;
  };

  const write = async (request: ApiRequest, mode: 'replace' | 'patch'): Promise<HttpReply> => {
    const definition = context.registry.require(request.params.stream!);
    const payload = await payloadOf(request);
    const key = request.params.entry!;
    // The URL segment is the entry key, whatever the body says (spec: "set on the payload").
    const input: EntryAttributes = { ...payload, [definition.config.key_name]: key };
    const { condition, shown } = writeCondition(context, request, definition, mode === 'replace' ? 'replace' : 'patch', payload, conditionOf(request));
    const result =
      mode === 'replace' ? await context.entries.replace(definition.id, key, input, condition) : await context.entries.patch(definition.id, key, input, condition);
    return one(request, definition, result.entry, result.created ? 201 : 200, payload, shown);
  };

  /**
   * An error on an entry endpoint answers like a success would be addressed: `meta.stream`,
   * `meta.parameters`, the (masked) `meta.payload` of a write, and the stream's links.
   */
  const errorReply = async (request: ApiRequest, error: AppError, withPayload: boolean): Promise<HttpReply> => {
    const id = request.params.stream ?? '';
    const definition = context.registry.get(id);
    const urls = urlsOf(context, request);
    const links = definition
      ? streamLinks(request, urls, info(definition).idSegment)
      : request.api.resources.includes('streams')
        ? `"self":${json(urls.self)},"streams":${json(urls.streams)}`
        : `"self":${json(urls.self)}`;
    let meta = `"parameters":${parametersOf(request)},"stream":${json(id)}`;
    if (withPayload) {
      const payload = await request.parsedBody().catch(() => undefined);
      if (payload !== undefined) meta += `,"payload":${json(maskedPayload(definition, payload))}`;
    }
    const reply: HttpReply = { status: error.status, body: envelope(`{${links}}`, `{${meta}}`, 'null', JSON.stringify(error.errors)) };
    if (error.headers !== undefined) reply.headers = error.headers;
    return reply;
  };

  /** A handler's AppError (not a 500) as an answer addressed like its success would be. */
  const recover = (request: ApiRequest, error: unknown, withPayload: boolean): Promise<HttpReply> => {
    if (!isAppError(error) || error.status === 500) throw error;
    return errorReply(request, error, withPayload);
  };

  const guarded =
    (handler: EndpointHandler, withPayload = false): EndpointHandler =>
    (request) => {
      let answer: HttpReply | Promise<HttpReply>;
      try {
        answer = handler(request);
      } catch (error) {
        return recover(request, error, withPayload);
      }
      return answer instanceof Promise ? answer.catch((error: unknown) => recover(request, error, withPayload)) : answer;
    };

  /** The answer to a GET of one entry (the reply cache first). */
  const shown = (request: ApiRequest, definition: StreamDefinition, key: string, entry: EntryAttributes | undefined, scope: ReadScope | undefined, stored = entry): HttpReply => {
    // Outside the caller's view rule is exactly as if it did not exist (issue #28).
    if (entry === undefined || (scope !== undefined && !context.entries.satisfies(definition, scope.where, stored!))) throw new NotFoundError(`Entry [${key}] not found.`);
    const cached = replies.recallOne(request, scope?.key ?? '', context.baseUrl(request), definition, entry);
    if (cached) return conditionalReply(request, cached.body, undefined, cached.etag);
    return one(request, definition, entry, 200, undefined, scope);
  };

  const showLater = async (request: ApiRequest, definition: StreamDefinition, key: string, scope: ReadScope | undefined): Promise<HttpReply> => {
    const relations = request.query.length > 0 ? parseWith(request.query) : undefined;
    const found = await context.entries.find(definition.id, key);
    if (found === undefined || relations === undefined) return shown(request, definition, key, found, scope);
    if (scope !== undefined && !context.entries.satisfies(definition, scope.where, found)) throw new NotFoundError(`Entry [${key}] not found.`);
    const viewer = accessOf(request)?.viewer;
    return shown(request, definition, key, (await context.entries.withRelations(definition.id, [found], relations, viewer))[0]!, scope, found);
  };

  const handlers: Record<Extract<EndpointName, `entries.${string}`>, EndpointHandler> = {
    async 'entries.index'(request) {
      const definition = context.registry.require(request.params.stream!);
      const scope = readScopeOf(request, definition, 'list');
      const query = parseListQuery(request.query, config.api);
      const result = await context.entries.list(definition.id, query, accessOf(request)?.viewer);
      const cached = replies.recall(request, scope?.key ?? '', context.baseUrl(request), definition, result.entries, result.total);
      if (cached) return conditionalReply(request, cached.body, undefined, cached.etag);
      return list(request, definition, result.entries, result.total, query.page, query.perPage, scope);
    },
    'entries.show'(request) {
      const definition = context.registry.require(request.params.stream!);
      const key = request.params.entry!;
      const scope = readScopeOf(request, definition, 'view');
      // An entry held in memory is answered within the request's call (no promise).
      if (request.query.length === 0) {
        const found = context.entries.peek(definition.id, key);
        // NOT_AT_HAND is the only symbol peek answers; `found !== NOT_AT_HAND` compared an
        // object with a symbol, which V8 runs as a generic builtin call on every request.
        if (typeof found !== 'symbol') return shown(request, definition, key, found, scope);
      }
      return showLater(request, definition, key, scope);
    },
    async 'entries.store'(request) {
      const definition = context.registry.require(request.params.stream!);
      const payload = await payloadOf(request);
      const { condition, shown: scope } = writeCondition(context, request, definition, 'create', payload, conditionOf(request));
      const entry = await context.entries.create(definition.id, { ...payload }, condition);
      return one(request, definition, entry, 201, payload, scope);
    },
    'entries.update': (request) => write(request, 'replace'),
    'entries.patch': (request) => write(request, 'patch'),
    async 'entries.delete'(request) {
      const definition = context.registry.require(request.params.stream!);
      const key = request.params.entry!;
      const { condition } = writeCondition(context, request, definition, 'delete', {}, conditionOf(request));
      if (!(await context.entries.delete(definition.id, key, condition))) throw new NotFoundError(`Entry [${key}] not found.`);
      return { status: 204 };
    },
    async 'entries.query'(request) {
      const definition = context.registry.require(request.params.stream!);
      const body = (await request.parsedBody()) ?? {};
      const steps = parseSteps(body.parameters);
      const params = new URLSearchParams(request.query);
      const { page, perPage } = paging({ per_page: params.get('per_page') ?? undefined, page: params.get('page') ?? undefined }, config.api, body);
      const scope = readScopeOf(request, definition, 'list');
      const result = await context.entries.query(definition.id, steps, page, perPage, accessOf(request)?.viewer);
      return list(request, definition, result.entries, result.total, page, perPage, scope);
    },
  };
  const writes = new Set(['entries.store', 'entries.update', 'entries.patch']);
  for (const name of Object.keys(handlers) as Array<keyof typeof handlers>) handlers[name] = guarded(handlers[name], writes.has(name));
  return handlers;
}
