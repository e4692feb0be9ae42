import type { EndpointHandler } from '../context.js';
import { writeCondition } from '../entry-access.js';
import { conditionOf, type EntryReplies } from '../entry-replies.js';

/** `entries.store`: POST a new entry (201 with its Location). */
export function storeEntry(replies: EntryReplies): EndpointHandler {
  const { context } = replies;
  return async (request) => {
    const definition = context.registry.require(request.params.stream!);
    const payload = await replies.payloadOf(request);
    const { condition, shown: scope } = writeCondition(context, request, definition, 'create', payload, conditionOf(request));
    const entry = await context.entries.create(definition.id, { ...payload }, condition);
    return replies.one(request, definition, entry, 201, payload, scope);
  };
}
