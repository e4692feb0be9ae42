import { NotFoundError } from '../../../../kernel/index.js';
import type { EndpointHandler } from '../context.js';
import { writeCondition } from '../entry-access.js';
import { conditionOf, type EntryReplies } from '../entry-replies.js';

/** `entries.delete`: DELETE one entry (204; 404 when there is none). */
export function deleteEntry(replies: EntryReplies): EndpointHandler {
  const { context } = replies;
  return async (request) => {
    const definition = context.registry.require(request.params.stream!);
    const key = request.params.entry!;
    const { condition } = writeCondition(context, request, definition, 'delete', {}, conditionOf(request));
    if (!(await context.entries.delete(definition.id, key, condition))) throw new NotFoundError(`Entry [${key}] not found.`);
    return { status: 204 };
  };
}
