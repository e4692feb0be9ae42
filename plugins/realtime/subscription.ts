import { BadRequestError } from '../../kernel/index.js';
import { parseListQuery, readScopeOf, type ApiRequest } from '../api/index.js';
import { accessView } from './access-view.js';
import type { EntriesService } from '../entries/index.js';
import type { StreamRegistry } from '../streams/index.js';
import type { Change, ChangeFilter } from './feed.js';

/** What a client subscribes to: one stream, from a cursor, with list-style filters. */
export interface Subscription {
  stream: string;
  since: string | undefined;
  /** True when the subscription has `where[...]` filters (every change of the stream otherwise). */
  filtered: boolean;
  /**
   * The `where[...]`/`constraint[...]` filters; subscriptions with the same filters share
   * its key, so a change is checked once per filter shape, not once per subscriber.
   */
  filter: ChangeFilter;
}

/** The filter of a subscription without `where`. */
const EVERYTHING: ChangeFilter = { key: '', accepts: () => true };

/** Cursors are short tokens; anything longer is not one of ours (checked before any lookup). */
const MAX_CURSOR = 64;

/**
 * The subscription a changes request asks for: the stream (404 when unknown), the cursor
 * (`Last-Event-ID` first, as EventSource sends it on reconnect, else `?since=`), and the
 * filters, parsed and cast exactly as the list endpoint does (400 on a bad field or value).
 */
export function subscriptionOf(request: ApiRequest, registry: StreamRegistry, entries: EntriesService, pageDefaults: { per_page: number; max_per_page: number }): Subscription {
  const definition = registry.require(request.params.stream!);
  const params = new URLSearchParams(request.query);
  const since = request.header('last-event-id') || params.get('since') || undefined;
  if (since !== undefined && since.length > MAX_CURSOR) throw new BadRequestError('The cursor is too long.', { parameter: 'since' });
  const query = parseListQuery(request.query, pageDefaults);
  // Under access rules (issue #28) the changes are a list: the `list` rule decides (401/403 without one).
  const scope = readScopeOf(request, definition, 'list');
  const restricted = scope !== undefined && (scope.where !== undefined || scope.hidden.size > 0);
  if (query.where.length === 0 && !restricted) return { stream: definition.id, since, filtered: false, filter: EVERYTHING };
  if (scope !== undefined) for (const clause of query.where) if (scope.hidden.has(clause.field.split('.', 1)[0]!)) throw new BadRequestError(`The ${clause.field.split('.', 1)[0]} field is hidden: it cannot be used to filter.`, { field: clause.field, rule: 'hidden' });
  let filter = EVERYTHING;
  if (query.where.length > 0) {
    const match = entries.matcher(definition.id, query.where);
    // An omitted change (its attributes too large to keep) passes every filter: the client re-reads the entry.
    const key = JSON.stringify(query.where.map((w) => [w.field, w.operator, w.value]));
    filter = { key, accepts: (change) => change.match === null || match(change.match) };
  }
  return { stream: definition.id, since, filtered: true, filter: restricted ? accessView(filter, scope, definition, entries) : filter };
}

/** The pub/sub topic of every change of a stream (WebSocket subscriptions without filters, uWS only). */
export function topicOf(stream: string): string {
  return `changes/${stream}`;
}

/** A change as a WebSocket message: `{"type":<event>,"stream","id","data","cursor"}`; made once per change. */
export function socketMessage(change: Change): string {
  const wire = (change.wire ??= {});
  return (wire.ws ??= `{"type":"${change.event}",${changeJson(change).slice(1, -1)},"cursor":${JSON.stringify(change.cursor)}}`);
}

/** One Server-Sent Event (bytes, made once per change and shared by every stream that sends it). */
export function sseEvent(change: Change): Buffer {
  const wire = (change.wire ??= {});
  // The data is one line of JSON (JSON.stringify never writes a newline).
  return (wire.sse ??= Buffer.from(`id: ${change.cursor}\nevent: ${change.event}\ndata: ${changeJson(change)}\n\n`));
}

/**
 * A change as clients see it (SSE `data`, WebSocket messages, JSON pages, webhook bodies).
 * An entry too large for the feed comes as a reference: `"data": null, "data_omitted": true`.
 */
export function changeJson(change: Change): string {
  const wire = (change.wire ??= {});
  return (wire.json ??= `{"stream":${JSON.stringify(change.stream)},"id":${JSON.stringify(change.id ?? null)},"data":${change.data}${change.omitted ? ',"data_omitted":true' : ''}}`);
}
