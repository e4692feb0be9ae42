import { BadRequestError } from '../../kernel/index.js';
import { parseListQuery, type ApiRequest } from '../api/index.js';
import type { EntriesService } from '../entries/index.js';
import type { StreamRegistry } from '../streams/index.js';
import type { Change } from './feed.js';

/** What a client subscribes to: one stream, from a cursor, with list-style filters. */
export interface Subscription {
  stream: string;
  since: string | undefined;
  /** True when the subscription has `where[...]` filters (every change of the stream otherwise). */
  filtered: boolean;
  /** True when the change passes the subscription's `where[...]`/`constraint[...]` filters. */
  accepts(change: Change): boolean;
}

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
  const match = query.where.length === 0 ? undefined : entries.matcher(definition.id, query.where);
  return { stream: definition.id, since, filtered: match !== undefined, accepts: (change) => match === undefined || match(change.match) };
}

/** The pub/sub topic of every change of a stream (WebSocket subscriptions without filters, uWS only). */
export function topicOf(stream: string): string {
  return `changes/${stream}`;
}

/** A change as a WebSocket message: `{"type":<event>,"stream","id","data","cursor"}`. */
export function socketMessage(change: Change): string {
  return `{"type":"${change.event}",${changeJson(change).slice(1, -1)},"cursor":${JSON.stringify(change.cursor)}}`;
}

/** A change as clients see it (SSE `data`, WebSocket messages, JSON pages, webhook bodies). */
export function changeJson(change: Change): string {
  return `{"stream":${JSON.stringify(change.stream)},"id":${JSON.stringify(change.id)},"data":${change.data}}`;
}
