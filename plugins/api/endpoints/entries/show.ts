import type { ReadScope } from '../../../entries/index.js';
import { NotFoundError } from '../../../../kernel/index.js';
import type { HttpReply } from '../../../http/index.js';
import type { StreamDefinition } from '../../../streams/index.js';
import { accessOf, readScopeOf } from '../../access.js';
import type { ApiRequest } from '../../contracts.js';
import { parseWith } from '../../list-params.js';
import type { EndpointHandler } from '../context.js';
import type { EntryReplies } from '../entry-replies.js';

/** `entries.show`: GET one entry; one held in memory is answered within the request's call (no promise). */
export function showEntry(replies: EntryReplies): EndpointHandler {
  const { context } = replies;
  const showLater = async (request: ApiRequest, definition: StreamDefinition, key: string, scope: ReadScope | undefined): Promise<HttpReply> => {
    const relations = request.query.length > 0 ? parseWith(request.query) : undefined;
    const found = await context.entries.find(definition.id, key);
    if (found === undefined || relations === undefined) return replies.shown(request, definition, key, found, scope);
    if (scope !== undefined && !context.entries.satisfies(definition, scope.where, found)) throw new NotFoundError(`Entry [${key}] not found.`);
    const viewer = accessOf(request)?.viewer;
    return replies.shown(request, definition, key, (await context.entries.withRelations(definition.id, [found], relations, viewer))[0]!, scope, found);
  };
  return (request) => {
    const definition = context.registry.require(request.params.stream!);
    const key = request.params.entry!;
    const scope = readScopeOf(request, definition, 'view');
    if (request.query.length === 0) {
      const found = context.entries.peek(definition.id, key);
      // NOT_AT_HAND is the only symbol peek answers; `found !== NOT_AT_HAND` compared an
      // object with a symbol, which V8 runs as a generic builtin call on every request.
      if (typeof found !== 'symbol') return replies.shown(request, definition, key, found, scope);
    }
    return showLater(request, definition, key, scope);
  };
}
