import { isAppError, NotFoundError, type AppError } from '../../../kernel/index.js';
import type { ReadScope, WriteCondition } from '../../entries/index.js';
import type { EntryAttributes, RelationInfo } from '../../fields/index.js';
import type { HttpReply } from '../../http/index.js';
import { fieldOf, type StreamDefinition } from '../../streams/index.js';
import type { ApiRequest } from '../contracts.js';
import { conditionalReply, envelope, etagOf, keptReply } from '../envelope.js';
import { assertNoOperatorKeys } from '../list-params.js';
import { json, segment, urlsOf, type EndpointContext, type EndpointHandler, type Urls } from './context.js';
import { pagination } from './pagination.js';
import { maskedPayload } from './payload-mask.js';
import { ReplyCache } from './reply-cache.js';
import { narrowEtag } from './entry-access.js';

const RESERVED_LINKS = new Set(['self', 'streams', 'stream', 'entries', 'location', 'first_page', 'next_page', 'previous_page']);

interface StreamInfo {
  /** JSON of the stream id, once. */
  idJson: string;
  idSegment: string;
  /** Relationship fields that may get a link (not protected, not shadowing a standard link). */
  relations: RelationInfo[];
}

/** `If-Match` / `If-None-Match` of a write, checked by the entries layer under the entry's lock. */
export function conditionOf(request: ApiRequest): WriteCondition | undefined {
  const ifMatch = request.header('if-match');
  const ifNoneMatch = request.header('if-none-match');
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  // A tag read with hidden fields names the stored version plus the hidden set (narrowEtag): compare the version.
  return { ifMatch: ifMatch?.replace(/\.[A-Za-z0-9_-]+"/g, '"'), ifNoneMatch };
}

/**
 * What every entry endpoint shares: the envelope of one entry and of a list (links, meta,
 * the reply cache), the answer to an error addressed like its success, and the guard that
 * turns a handler's AppError into that answer. One instance per API boot; the handlers
 * (entries/*.ts, one per endpoint) hold it.
 */
export class EntryReplies {
  // Definitions are immutable values (a change builds a new object): cache per object.
  private readonly infos = new WeakMap<StreamDefinition, StreamInfo>();
  /**
   * Bodies of recent GET answers with their ETag. A stored entry is replaced, never
   * mutated, on every write, so "same entry objects, same definition, same URL" means
   * the same bytes: the hot path then skips building the envelope and hashing it.
   */
  readonly replies: ReplyCache;

  constructor(readonly context: EndpointContext) {
    this.replies = new ReplyCache(context.config.streams.caches.replies_bytes);
  }


  private info(definition: StreamDefinition): StreamInfo {
    let found = this.infos.get(definition);
    if (found === undefined) {
      const relations = this.context.fields.relations(definition).filter((r) => !RESERVED_LINKS.has(r.handle) && fieldOf(definition, r.handle)?.protected !== true);
      found = { idJson: json(definition.id), idSegment: segment(definition.id), relations };
      this.infos.set(definition, found);
    }
    return found;
  }

  /** self, streams, stream, entries; the two definition links only where the interface serves definitions. */
  private streamLinks(request: ApiRequest, urls: Urls, idSegment: string): string {
    const streamUrl = `${urls.streams}/${idSegment}`;
    const entries = `"entries":${json(`${streamUrl}/entries`)}`;
    if (!request.api.resources.includes('streams')) return `"self":${json(urls.self)},${entries}`;
    return `"self":${json(urls.self)},"streams":${json(urls.streams)},"stream":${json(streamUrl)},${entries}`;
  }

  /** `meta.parameters`: the route's parameters as sent. */
  private parametersOf(request: ApiRequest): string {
    const entryParam = request.params.entry;
    const stream = json(request.params.stream ?? '');
    return entryParam === undefined ? `{"stream":${stream}}` : `{"stream":${stream},"entry":${json(entryParam)}}`;
  }

  /**
   * `links.<handle>` of a single-entry show: the field types say where a value points
   * (FieldsService.links: relationship, polymorphic, addon types); a `multiple`
   * relationship links to the related list filtered on its keys.
   */
  private relationLinks(request: ApiRequest, urls: Urls, definition: StreamDefinition, stream: StreamInfo, entry: EntryAttributes, hidden: ReadonlySet<string> | undefined): string {
    let out = '';
    const root = `${urls.base}${request.api.prefix}/`;
    const single = this.context.fields.links(definition, entry);
    // A related stream deleted with ?force=true (or by hand) leaves values without links.
    const gone = (handle: string): boolean => {
      const relation = stream.relations.find((r) => r.handle === handle);
      return relation !== undefined && this.context.registry.get(relation.stream) === undefined;
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
  }

  /** One entry in the envelope; 201 replies carry `links.location` and a Location header. */
  one(request: ApiRequest, definition: StreamDefinition, entry: EntryAttributes, status: number, payload?: Record<string, unknown>, scope?: ReadScope): HttpReply {
    const hidden = scope?.hidden;
    const stream = this.info(definition);
    const urls = urlsOf(this.context, request);
    const key = this.context.entries.keyOf(definition, entry);
    const entryUrl = `${urls.streams}/${stream.idSegment}/entries/${segment(key)}`;
    let links = this.streamLinks(request, urls, stream.idSegment);
    if (status === 201) links += `,"location":${json(entryUrl)}`;
    if (request.api.endpoint === 'entries.show') links += this.relationLinks(request, urls, definition, stream, entry, hidden);
    const parameters = this.parametersOf(request);
    const meta =
      payload === undefined
        ? `{"parameters":${parameters},"stream":${stream.idJson}}`
        : `{"parameters":${parameters},"stream":${stream.idJson},"payload":${json(maskedPayload(definition, payload))}}`;
    const body = envelope(`{${links}}`, meta, this.context.entries.toJson(definition, entry, hidden));
    // The ETag of one entry is its stored version (not a hash of these bytes), so the tag a
    // client read is the one `If-Match` compares with, whatever URL or links it came with;
    // with hidden fields it also names the hidden set (callers who see other fields get other tags).
    const etag = narrowEtag(this.context.entries.versionOf(entry), hidden);
    if (status === 200 && payload === undefined) {
      this.replies.remember(request, scope?.key ?? '', urls.base, definition, [entry], 1, body, etag);
      return conditionalReply(request, body, undefined, etag);
    }
    return { status, body, headers: status === 201 ? [['Location', entryUrl], ['ETag', etag]] : [['ETag', etag]] };
  }

  list(request: ApiRequest, definition: StreamDefinition, found: EntryAttributes[], total: number, page: number, perPage: number, scope: ReadScope | undefined): HttpReply {
    const stream = this.info(definition);
    const urls = urlsOf(this.context, request);
    const pages = pagination(request, urls, total, page, perPage, request.method === 'GET' || request.method === 'HEAD');
    let data = '[';
    for (let i = 0; i < found.length; i++) data += (i === 0 ? '' : ',') + this.context.entries.toJson(definition, found[i]!, scope?.hidden);
    data += ']';
    const body = envelope(
      `{${this.streamLinks(request, urls, stream.idSegment)}${pages.links === '' ? '' : `,${pages.links}`}}`,
      `{"parameters":{"stream":${stream.idJson}},"stream":${stream.idJson},${pages.meta}}`,
      data,
    );
    if (request.method !== 'GET' && request.method !== 'HEAD') return { status: 200, body };
    const etag = etagOf(body);
    this.replies.remember(request, scope?.key ?? '', urls.base, definition, found, total, body, etag);
    return conditionalReply(request, body, undefined, etag);
  }

  /** A write payload: a flat object without `$` keys (operators to some stores). */
  async payloadOf(request: ApiRequest): Promise<EntryAttributes> {
    const body = (await request.parsedBody()) ?? {};
    assertNoOperatorKeys(body, 'the request body');
    return body;
  }

  /**
   * An error on an entry endpoint answers like a success would be addressed: `meta.stream`,
   * `meta.parameters`, the (masked) `meta.payload` of a write, and the stream's links.
   */
  private async errorReply(request: ApiRequest, error: AppError, withPayload: boolean): Promise<HttpReply> {
    const id = request.params.stream ?? '';
    const definition = this.context.registry.get(id);
    const urls = urlsOf(this.context, request);
    const links = definition
      ? this.streamLinks(request, urls, this.info(definition).idSegment)
      : request.api.resources.includes('streams')
        ? `"self":${json(urls.self)},"streams":${json(urls.streams)}`
        : `"self":${json(urls.self)}`;
    let meta = `"parameters":${this.parametersOf(request)},"stream":${json(id)}`;
    if (withPayload) {
      const payload = await request.parsedBody().catch(() => undefined);
      if (payload !== undefined) meta += `,"payload":${json(maskedPayload(definition, payload))}`;
    }
    const reply: HttpReply = { status: error.status, body: envelope(`{${links}}`, `{${meta}}`, 'null', JSON.stringify(error.errors)) };
    if (error.headers !== undefined) reply.headers = error.headers;
    return reply;
  }

  /** A handler's AppError (not a 500) as an answer addressed like its success would be. */
  private recover(request: ApiRequest, error: unknown, withPayload: boolean): Promise<HttpReply> {
    if (!isAppError(error) || error.status === 500) throw error;
    return this.errorReply(request, error, withPayload);
  }

  guarded(handler: EndpointHandler, withPayload = false): EndpointHandler {
    return (request) => {
      let answer: HttpReply | Promise<HttpReply>;
      try {
        answer = handler(request);
      } catch (error) {
        return this.recover(request, error, withPayload);
      }
      return answer instanceof Promise ? answer.catch((error: unknown) => this.recover(request, error, withPayload)) : answer;
    };
  }

  /** The answer to a GET of one entry (the reply cache first). */
  shown(request: ApiRequest, definition: StreamDefinition, key: string, entry: EntryAttributes | undefined, scope: ReadScope | undefined, stored = entry): HttpReply {
    // Outside the caller's view rule is exactly as if it did not exist (issue #28).
    if (entry === undefined || (scope !== undefined && !this.context.entries.satisfies(definition, scope.where, stored!))) throw new NotFoundError(`Entry [${key}] not found.`);
    const cached = this.replies.recallOne(request, scope?.key ?? '', this.context.baseUrl(request), definition, entry);
    if (cached) return keptReply(request, cached.reply, cached.etag);
    return this.one(request, definition, entry, 200, undefined, scope);
  }


}
