import { accessOf, readScopeOf } from '../../access.js';
import { paging, parseSteps } from '../../list-params.js';
import type { EndpointHandler } from '../context.js';
import type { EntryReplies } from '../entry-replies.js';

/** `entries.query`: POST criteria steps (`parameters`), answered as a page of a list. */
export function queryEntries(replies: EntryReplies): EndpointHandler {
  const { context } = replies;
  return async (request) => {
    const definition = context.registry.require(request.params.stream!);
    const body = (await request.parsedBody()) ?? {};
    const steps = parseSteps(body.parameters);
    const params = new URLSearchParams(request.query);
    const { page, perPage } = paging({ per_page: params.get('per_page') ?? undefined, page: params.get('page') ?? undefined }, context.config.api, body);
    const scope = readScopeOf(request, definition, 'list');
    const result = await context.entries.query(definition.id, steps, page, perPage, accessOf(request)?.viewer);
    return replies.list(request, definition, result.entries, result.total, page, perPage, scope);
  };
}
