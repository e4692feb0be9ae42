import type { ListQuery, ListResult, ReadScope } from '../../../entries/index.js';
import type { HttpReply } from '../../../http/index.js';
import type { StreamDefinition } from '../../../streams/index.js';
import { accessOf, readScopeOf } from '../../access.js';
import type { ApiRequest } from '../../contracts.js';
import { keptReply } from '../../envelope.js';
import { ListQueryCache } from '../../list-params.js';
import type { EndpointHandler } from '../context.js';
import type { EntryReplies } from '../entry-replies.js';

/**
 * `entries.index`: GET a page of a stream's entries (the reply cache first). A page of a
 * source that holds its entries in memory is answered within the request's own call (no
 * promise, no wait for the client to go away), as a GET of one entry is.
 */
export function listEntries(replies: EntryReplies): EndpointHandler {
  const { context } = replies;
  const queries = new ListQueryCache(context.config.api);
  const answer = (request: ApiRequest, definition: StreamDefinition, scope: ReadScope | undefined, query: ListQuery, result: ListResult): HttpReply => {
    const cached = replies.replies.recall(request, scope?.key ?? '', context.baseUrl(request), definition, result.entries, result.total);
    if (cached) return keptReply(request, cached.reply, cached.etag);
    return replies.list(request, definition, result.entries, result.total, query.page, query.perPage, scope);
  };
  return (request) => {
    const definition = context.registry.require(request.params.stream!);
    // Refused (401/403) before the query is read.
    const scope = readScopeOf(request, definition, 'list');
    const query = queries.parse(request.query);
    const viewer = accessOf(request)?.viewer;
    const now = context.entries.listNow(definition.id, query, viewer);
    if (typeof now !== 'symbol') return answer(request, definition, scope, query, now);
    return context.entries.list(definition.id, query, viewer).then((result) => answer(request, definition, scope, query, result));
  };
}
