import { accessOf, readScopeOf } from '../../access.js';
import { keptReply } from '../../envelope.js';
import { ListQueryCache } from '../../list-params.js';
import type { EndpointHandler } from '../context.js';
import type { EntryReplies } from '../entry-replies.js';

/** `entries.index`: GET a page of a stream's entries (the reply cache first). */
export function listEntries(replies: EntryReplies): EndpointHandler {
  const { context } = replies;
  const queries = new ListQueryCache(context.config.api);
  return async (request) => {
    const definition = context.registry.require(request.params.stream!);
    const scope = readScopeOf(request, definition, 'list');
    const query = queries.parse(request.query);
    const result = await context.entries.list(definition.id, query, accessOf(request)?.viewer);
    const cached = replies.replies.recall(request, scope?.key ?? '', context.baseUrl(request), definition, result.entries, result.total);
    if (cached) return keptReply(request, cached.reply, cached.etag);
    return replies.list(request, definition, result.entries, result.total, query.page, query.perPage, scope);
  };
}
