import type { ApiRequest, ApiService, ExtraEndpoint } from '../api/index.js';
import { envelope } from '../api/index.js';
import type { EntriesService } from '../entries/index.js';
import type { HttpReply, StreamSink } from '../http/index.js';
import type { StreamRegistry } from '../streams/index.js';
import type { Change, ChangeFeed } from './feed.js';
import { changeJson, subscriptionOf, type Subscription } from './subscription.js';

/** Set in `request.locals` by a WebSocket subscription's access check: the endpoint only checks and describes. */
export const PROBE = 'realtime.probe';

export interface Probe {
  subscription?: Subscription;
}

export interface ChangesDeps {
  feed: ChangeFeed;
  api: ApiService;
  registry(): StreamRegistry;
  entries(): EntriesService;
  pageDefaults: { per_page: number; max_per_page: number };
  heartbeatMs: number;
  /** Open streams, ended at shutdown. */
  open: Set<StreamSink>;
}

const CHANGE_SCHEMA = {
  type: 'object',
  required: ['cursor', 'event', 'stream', 'id', 'data'],
  properties: { cursor: { type: 'string' }, event: { enum: ['created', 'updated', 'deleted'] }, stream: { type: 'string' }, id: {}, data: { type: ['object', 'null'] } },
};

/** How the live OpenAPI document shows the changes endpoint. */
const CHANGES_OPERATION = {
  summary: 'Changes of the stream: Server-Sent Events with Accept: text/event-stream, else a JSON page of the changes after ?since=',
  parameters: [
    { name: 'since', in: 'query', required: false, schema: { type: 'string' }, description: 'A cursor: only changes after it' },
    { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'As EventSource sends it on reconnect (wins over since)' },
    { name: 'per_page', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
  ],
  responses: {
    '200': {
      description: 'An event stream, or a page of changes (410 when the cursor is older than the kept history)',
      content: {
        'text/event-stream': { schema: { type: 'string' } },
        'application/json': {
          schema: {
            type: 'object',
            required: ['data', 'errors', 'links', 'meta'],
            properties: {
              data: { type: 'array', items: CHANGE_SCHEMA },
              errors: { type: 'array', maxItems: 0 },
              links: { type: 'object' },
              meta: { type: 'object', properties: { cursor: { type: ['string', 'null'] }, latest: { type: ['string', 'null'] }, has_more: { type: 'boolean' } } },
            },
          },
        },
      },
    },
  },
};

/** One Server-Sent Event. The data is one line of JSON (JSON.stringify never writes a newline). */
export function sseEvent(change: Change): string {
  return `id: ${change.cursor}\nevent: ${change.event}\ndata: ${changeJson(change)}\n\n`;
}

/**
 * `GET <prefix>/streams/{stream}/changes`: with `Accept: text/event-stream` a live stream of
 * Server-Sent Events (replaying what came after `Last-Event-ID`/`?since=` first); otherwise
 * a JSON page of the changes after `?since=` for polling clients. An API endpoint like any
 * other: the interface's middleware group, the gate and the entries resource middleware run
 * before it.
 */
export function changesEndpoint(deps: ChangesDeps): ExtraEndpoint {
  return {
    name: 'realtime.changes',
    method: 'GET',
    pattern: '/streams/:stream/changes',
    resource: 'entries',
    openapi: CHANGES_OPERATION,
    handler: async (request) => {
      const subscription = subscriptionOf(request, deps.registry(), deps.entries(), deps.pageDefaults);
      const probe = request.locals[PROBE] as Probe | undefined;
      if (probe !== undefined) {
        probe.subscription = subscription;
        return { status: 204 };
      }
      if ((request.header('accept') ?? '').includes('text/event-stream')) return eventStream(deps, subscription);
      return changesPage(deps, request, subscription);
    },
  };
}

function eventStream(deps: ChangesDeps, subscription: Subscription): HttpReply {
  // A bad or expired cursor is a 400/410 answer now, not a broken stream.
  deps.feed.resume(subscription.stream, subscription.since);
  return {
    status: 200,
    type: 'text/event-stream; charset=utf-8',
    headers: [
      ['Cache-Control', 'no-cache'],
      // Proxies (nginx) must not buffer the stream.
      ['X-Accel-Buffering', 'no'],
    ],
    // Subscribed only once the stream is open: a reply that is never streamed (HEAD, a client
    // gone before the answer) leaves no listener behind. Replay and subscription happen in
    // this one turn of the event loop, so no change falls between them.
    stream: (open) => {
      let resumed: ReturnType<ChangeFeed['resume']>;
      try {
        resumed = deps.feed.resume(subscription.stream, subscription.since, (change) => {
          if (subscription.accepts(change)) open.write(sseEvent(change));
        });
      } catch {
        // The cursor expired in the meantime: the client reconnects with it and gets the 410.
        open.end();
        return;
      }
      deps.open.add(open);
      const heartbeat = setInterval(() => open.write(': heartbeat\n\n'), deps.heartbeatMs);
      heartbeat.unref();
      open.onClose(() => {
        clearInterval(heartbeat);
        resumed.unsubscribe();
        deps.open.delete(open);
      });
      let text = 'retry: 2000\n: connected\n\n';
      for (const change of resumed.replay) if (subscription.accepts(change)) text += sseEvent(change);
      open.write(text);
    },
  };
}

/** The changes after `?since=` (from the oldest kept one without it), a page at a time. */
function changesPage(deps: ChangesDeps, request: ApiRequest, subscription: Subscription): HttpReply {
  const params = new URLSearchParams(request.query);
  const perPage = Math.min(deps.pageDefaults.max_per_page, Math.max(1, Number(params.get('per_page')) || deps.pageDefaults.per_page));
  const all = subscription.since === undefined ? deps.feed.kept(subscription.stream) : deps.feed.resume(subscription.stream, subscription.since).replay;
  const page: Change[] = [];
  let last: Change | undefined;
  let more = false;
  for (const change of all) {
    if (page.length === perPage) {
      more = true;
      break;
    }
    last = change;
    if (subscription.accepts(change)) page.push(change);
  }
  const cursor = last?.cursor ?? subscription.since ?? deps.feed.latest ?? null;
  const base = `${deps.api.baseUrl(request)}${request.path}`;
  const next = (c: string): string => {
    const q = new URLSearchParams(request.query);
    q.set('since', c);
    return `${base}?${q.toString()}`;
  };
  const links: Record<string, string> = { self: `${base}${request.query ? `?${request.query}` : ''}` };
  if (cursor !== null) links.next = next(cursor);
  const data = `[${page.map((c) => `{"cursor":${JSON.stringify(c.cursor)},"event":"${c.event}",${changeJson(c).slice(1)}`).join(',')}]`;
  const meta = JSON.stringify({ stream: subscription.stream, cursor, latest: deps.feed.latest ?? null, has_more: more });
  return { status: 200, headers: [['Cache-Control', 'no-cache']], body: envelope(JSON.stringify(links), meta, data) };
}
