import type { ApiRequest, ApiService, ExtraEndpoint } from '../api/index.js';
import { envelope } from '../api/index.js';
import type { EntriesService } from '../entries/index.js';
import type { HttpReply, StreamSink } from '../http/index.js';
import type { StreamRegistry } from '../streams/index.js';
import { isAppError, type Logger } from '../../kernel/index.js';
import { Admission, type RealtimeLimits } from './admission.js';
import type { Change, ChangeFeed } from './feed.js';
import type { HistoryLoad } from './history-load.js';
import { follow, page, resumeAt, type FollowResult } from './replay.js';
import { ClusterReplay, followCluster, pageCluster, type ClusterReplayDeps } from './cluster-replay.js';
import { changeJson, sseEvent, subscriptionOf, type Subscription } from './subscription.js';

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
  admission: Admission;
  limits: RealtimeLimits;
  /** Throws the 403 for a browser origin that may not follow changes here. */
  checkOrigin(request: ApiRequest): void;
  logger: Logger;
  /** Cluster cursors older than this node's history: replayed from the database (cluster-replay.ts). */
  cluster: ClusterReplayDeps;
  /** The boot's read of the history: a request waits for it (503 when it failed). */
  history: HistoryLoad;
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
    { name: 'Origin', in: 'header', required: false, schema: { type: 'string' }, description: 'A browser origin other than the server\'s own and those in api.cors.origins gets 403 for an event stream' },
  ],
  responses: {
    '200': {
      description:
        'An event stream, or a page of changes (410 when the cursor is older than the kept history; 429/503 with Retry-After when the client or the server holds as many event streams as allowed; 403 for a browser origin that may not follow changes)',
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
      await deps.history.whenReady();
      if ((request.header('accept') ?? '').includes('text/event-stream')) {
        deps.checkOrigin(request);
        return await eventStream(deps, request, subscription);
      }
      return changesPage(deps, request, subscription);
    },
  };
}

async function eventStream(deps: ChangesDeps, request: ApiRequest, subscription: Subscription): Promise<HttpReply> {
  const { feed, limits, logger } = deps;
  // A bad or expired cursor is a 400/410 answer now, not a broken stream; so is a client over its share.
  // A cluster cursor older than this node's history is checked against the database's now
  // (410 when the oplog moved past it), and read again once the stream opens (a reply never
  // streamed leaves no change stream open).
  const remote = await ClusterReplay.open(deps.cluster, subscription.stream, subscription.since);
  await remote?.close();
  const { after, filter } = remote !== undefined ? { after: 0, filter: subscription.filter } : resumeAt(feed, subscription.stream, subscription.since, subscription.filter, 'head');
  const client = Admission.clientOf(request.locals, request.ip);
  deps.admission.check('sse', client, filter.key.length);
  const requestId = request.id;
  return {
    status: 200,
    type: 'text/event-stream; charset=utf-8',
    headers: [
      ['Cache-Control', 'no-cache'],
      // Proxies (nginx) must not buffer the stream.
      ['X-Accel-Buffering', 'no'],
    ],
    // The slot is held, and the stream subscribed, only once it is open: a reply that is never
    // streamed (HEAD, a client gone before the answer) leaves nothing behind.
    stream: (open) => {
      let release: () => void;
      try {
        release = deps.admission.take('sse', client, filter.key.length);
      } catch {
        // Taken by others in the meantime: the client reconnects (EventSource does) and gets the 429/503.
        open.end();
        return;
      }
      let stop: (() => void) | undefined;
      deps.open.add(open);
      // A client that does not read is dropped once its budget waits for it (checked before each
      // write, so one change larger than the budget still reaches a client that reads).
      const send = (chunk: string | Uint8Array): void => {
        if (open.closed) return;
        if (open.buffered > limits.send_buffer_bytes) open.drop();
        else open.write(chunk);
      };
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), deps.heartbeatMs);
      heartbeat.unref();
      open.onClose(() => {
        clearInterval(heartbeat);
        stop?.();
        release();
        deps.open.delete(open);
      });
      send('retry: 2000\n: connected\n\n');
      const target = { write: (change: Change) => send(sseEvent(change)), closed: () => open.closed, buffered: () => open.buffered };
      const budget = { bytes: limits.replay_bytes, pauseAbove: limits.send_buffer_bytes / 2 };
      const start = async (): Promise<FollowResult> => {
        const again = remote === undefined ? undefined : await ClusterReplay.open(deps.cluster, subscription.stream, subscription.since);
        if (again !== undefined) return followCluster(again, feed, subscription.stream, filter, target, budget);
        // No replay needed (any more: the local history reaches the cursor now).
        const local = remote === undefined ? { after, filter } : resumeAt(feed, subscription.stream, subscription.since, filter, 'head');
        return follow(feed, subscription.stream, local.after, local.filter, target, budget);
      };
      start().then(
        (result) => {
          if (result.live) {
            if (open.closed) result.stop();
            else stop = result.stop;
            return;
          }
          // The replay budget is spent: an id-only event moves the client's Last-Event-ID to the
          // last change looked at, and it reconnects from there (after `retry`).
          if (result.cursor !== undefined) send(`id: ${result.cursor}\n\n`);
          open.end();
        },
        (error: unknown) => {
          // A 410 (the history moved past a slow replay) or a read failure: this stream ends,
          // never the process; the client reconnects and gets the answer as a status.
          if (!isAppError(error)) logger.error({ err: error, requestId, stream: subscription.stream }, 'an event stream failed');
          open.end();
        },
      ).catch((error: unknown) => {
        // Whatever a handler above threw ends this stream, never the process.
        logger.error({ err: error, requestId, stream: subscription.stream }, 'an event stream failed');
        open.drop();
      });
    },
  };
}

/** The changes after `?since=` (from the oldest kept one without it), a page at a time, read as they are needed. */
async function changesPage(deps: ChangesDeps, request: ApiRequest, subscription: Subscription): Promise<HttpReply> {
  const params = new URLSearchParams(request.query);
  const perPage = Math.min(deps.pageDefaults.max_per_page, Math.max(1, Number(params.get('per_page')) || deps.pageDefaults.per_page));
  const remote = await ClusterReplay.open(deps.cluster, subscription.stream, subscription.since);
  let found: { changes: Change[]; last: string | undefined; more: boolean };
  if (remote !== undefined) {
    found = await pageCluster(remote, deps.feed, subscription.stream, subscription.filter, perPage, deps.limits.replay_bytes);
  } else {
    const { after, filter } = resumeAt(deps.feed, subscription.stream, subscription.since, subscription.filter, 'oldest');
    found = await page(deps.feed, subscription.stream, after, filter, perPage, deps.limits.replay_bytes);
  }
  const { changes, last, more } = found;
  const latest = deps.feed.latestOf(subscription.stream) ?? null;
  const cursor = last ?? subscription.since ?? latest;
  const base = `${deps.api.baseUrl(request)}${request.path}`;
  const next = (c: string): string => {
    const q = new URLSearchParams(request.query);
    q.set('since', c);
    return `${base}?${q.toString()}`;
  };
  const links: Record<string, string> = { self: `${base}${request.query ? `?${request.query}` : ''}` };
  if (cursor !== null) links.next = next(cursor);
  const data = `[${changes.map((c) => `{"cursor":${JSON.stringify(c.cursor)},"event":"${c.event}",${changeJson(c).slice(1)}`).join(',')}]`;
  const meta = JSON.stringify({ stream: subscription.stream, cursor, latest, has_more: more });
  return { status: 200, headers: [['Cache-Control', 'no-cache']], body: envelope(JSON.stringify(links), meta, data) };
}
