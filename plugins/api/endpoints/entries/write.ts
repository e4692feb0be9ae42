import type { EntryAttributes } from '../../../fields/index.js';
import type { EndpointHandler } from '../context.js';
import { writeCondition } from '../entry-access.js';
import { conditionOf, type EntryReplies } from '../entry-replies.js';

/** `entries.update` (PUT, `replace`) and `entries.patch` (PATCH, `patch`): write one entry by its key. */
export function writeEntry(replies: EntryReplies, mode: 'replace' | 'patch'): EndpointHandler {
  const { context } = replies;
  return async (request) => {
    const definition = context.registry.require(request.params.stream!);
    const payload = await replies.payloadOf(request);
    const key = request.params.entry!;
    // The URL segment is the entry key, whatever the body says (spec: "set on the payload").
    const input: EntryAttributes = { ...payload, [definition.config.key_name]: key };
    const { condition, shown } = writeCondition(context, request, definition, mode, payload, conditionOf(request));
    const result = mode === 'replace' ? await context.entries.replace(definition.id, key, input, condition) : await context.entries.patch(definition.id, key, input, condition);
    return replies.one(request, definition, result.entry, result.created ? 201 : 200, payload, shown);
  };
}
