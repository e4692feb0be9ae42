import { assertSafeKeys, type HttpServer, type WebSocketPeer, type WebSocketSession } from '../http/index.js';
import type { Change, ChangeFeed, ChangeFilter } from './feed.js';
import { socketMessage, topicOf } from './subscription.js';
import { PROBE, type Probe } from './changes-endpoint.js';
import { isAppError, type Logger } from '../../kernel/index.js';
import type { Admission, RealtimeLimits } from './admission.js';
import { follow, resumeAt } from './replay.js';
import { ClusterReplay, followCluster, type ClusterReplayDeps } from './cluster-replay.js';

/** Messages of one socket waiting for the one being handled; more are refused (429). */
const MAX_QUEUED = 64;

/** Close codes that say why a socket was closed (4000-4999: the application's own). */
export const CLOSE_CODES = {
  /** This client holds as many sockets as it may (its HTTP equivalent: 429). */
  clientLimit: 4429,
  /** The server holds as many sockets as it can (503). */
  serverFull: 4503,
  /** The client did not read: what waited for it passed `realtime.limits.send_buffer_bytes`. */
  slowReader: 1008,
} as const;

export interface SessionContext {
  feed: ChangeFeed;
  server: HttpServer;
  admission: Admission;
  limits: RealtimeLimits;
  /** Who the socket counts for (`Admission.clientOf`). */
  client: string;
  /** The upgrade request's id, for log lines of this socket. */
  requestId: string;
  /** The interface prefix the socket was opened under (`/api`). */
  prefix: string;
  /** The upgrade request's headers (authorization, cookies, host) and address, for each access check. */
  headers: Record<string, string>;
  ip: string;
  logger: Logger;
  /** Cluster cursors older than this node's history: replayed from the database. */
  cluster: ClusterReplayDeps;
  onClose(session: RealtimeSession): void;
}

/**
 * One WebSocket client of `<prefix>/realtime`. Each `subscribe` is checked by routing the
 * GET it stands for (`<prefix>/streams/{stream}/changes?where...`) through the server, so a
 * subscription gets exactly the answer of the gate, the interface's middleware (auth,
 * throttle) and the endpoint's own checks (unknown stream, bad filter, expired cursor).
 */
export class RealtimeSession implements WebSocketSession {
  /** Per stream: how to stop it (unsubscribe, release its slot). */
  private readonly subscriptions = new Map<string, () => void>();
  private closed = false;
  /** The messages of a socket are handled one after another, in the order sent. */
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;
  private readonly release: () => void;

  constructor(
    private readonly peer: WebSocketPeer,
    private readonly context: SessionContext,
  ) {
    try {
      this.release = context.admission.take('socket', context.client);
    } catch (error) {
      // Over a limit: the socket is closed at once with a code that says which (a browser never sees an HTTP status of an upgrade).
      this.release = () => undefined;
      this.closed = true;
      const status = isAppError(error) ? error.status : 503;
      peer.close(status === 429 ? CLOSE_CODES.clientLimit : CLOSE_CODES.serverFull, (error as Error).message.slice(0, 120));
    }
  }

  onMessage(text: string): void {
    if (this.closed) return;
    // A subscribe waits for its access check; an unsubscribe sent after it must not overtake it.
    if (this.queued >= MAX_QUEUED) return this.error(429, `Too many messages waiting: at most ${MAX_QUEUED} at a time.`);
    this.queued++;
    this.queue = this.queue
      .then(() => (this.closed ? undefined : this.handle(text)))
      .catch((error: unknown) => this.error(500, 'Internal Server Error', undefined, error))
      .finally(() => {
        this.queued--;
      });
  }

  onClose(): void {
    this.closed = true;
    for (const stop of this.subscriptions.values()) stop();
    this.subscriptions.clear();
    this.release();
    this.context.onClose(this);
  }

  /** End the connection (server shutdown). */
  close(): void {
    this.peer.close(1001, 'server shutting down');
  }

  private async handle(text: string): Promise<void> {
    let message: Record<string, unknown>;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      assertSafeKeys(parsed as Record<string, unknown>);
      message = parsed as Record<string, unknown>;
    } catch {
      return this.error(400, 'Messages are JSON objects such as {"type":"subscribe","stream":"films"}.');
    }
    const stream = typeof message.stream === 'string' ? message.stream : undefined;
    if (message.type === 'unsubscribe') {
      if (stream === undefined) return this.error(400, 'unsubscribe needs a "stream".');
      this.subscriptions.get(stream)?.();
      this.subscriptions.delete(stream);
      return this.send({ type: 'unsubscribed', stream });
    }
    if (message.type !== 'subscribe') return this.error(400, 'The message type must be "subscribe" or "unsubscribe".', stream);
    if (stream === undefined || stream === '' || stream.length > 255) return this.error(400, 'subscribe needs a "stream" id.');
    if (this.subscriptions.has(stream)) return this.error(409, `Already subscribed to [${stream}].`, stream);
    const perSocket = this.context.limits.subscriptions_per_socket;
    if (this.subscriptions.size >= perSocket) return this.error(429, `A socket follows at most ${perSocket} streams.`, stream);
    const since = message.since;
    if (since !== undefined && typeof since !== 'string') return this.error(400, '"since" must be a cursor string.', stream);
    const query = filterQuery(message.where, message.constraint);
    if (typeof query !== 'string') return this.error(400, query.error, stream);

    const probe: Probe = {};
    const reply = await this.context.server.inject({
      method: 'GET',
      path: `${this.context.prefix}/streams/${encodeURIComponent(stream)}/changes`,
      query: since === undefined ? query : `${query}${query ? '&' : ''}since=${encodeURIComponent(since)}`,
      headers: this.context.headers,
      ip: this.context.ip,
      locals: { [PROBE]: probe },
    });
    if (this.closed) return;
    const subscription = probe.subscription;
    if (reply.status >= 400 || subscription === undefined) return this.error(reply.status >= 400 ? reply.status : 403, messageOf(reply.body) ?? 'Subscription refused.', stream);
    if (this.subscriptions.has(stream)) return this.error(409, `Already subscribed to [${stream}].`, stream);
    let release: () => void;
    try {
      release = this.context.admission.take('subscription', this.context.client, subscription.filter.key.length);
    } catch (error) {
      if (isAppError(error)) return this.error(error.status, error.message, stream);
      throw error;
    }
    let after = 0;
    let filter: ChangeFilter = subscription.filter;
    // A cluster cursor older than this node's history: the database's history first (cluster-replay.ts).
    let remote: ClusterReplay | undefined;
    try {
      remote = await ClusterReplay.open(this.context.cluster, stream, subscription.since);
      if (remote === undefined) ({ after, filter } = resumeAt(this.context.feed, stream, subscription.since, subscription.filter, 'head'));
    } catch (error) {
      release();
      if (isAppError(error)) return this.error(error.status, error.message, stream);
      throw error;
    }
    // Held from here: an unsubscribe (or the socket closing) while the replay runs stops it.
    let stopLive: (() => void) | undefined;
    let stopped = false;
    const stop = (): void => {
      stopped = true;
      stopLive?.();
      release();
    };
    if (this.closed || this.subscriptions.has(stream)) {
      await remote?.close();
      return stop();
    }
    this.subscriptions.set(stream, stop);
    this.send({ type: 'subscribed', stream, cursor: this.context.feed.latestOf(stream) ?? null });
    // Every change of the stream, on a transport with native pub/sub (uWS): one topic per
    // stream, written to all its subscribers by uWS itself (the plugin publishes each change
    // once); filtered subscriptions, and node:http, get each change from a feed listener.
    const { peer } = this;
    const native = remote === undefined && filter === subscription.filter && !subscription.filtered && peer.subscribe !== undefined && this.context.server.publish !== undefined;
    const target = { write: (change: Change) => this.sendChange(change), closed: () => this.closed || stopped, buffered: () => peer.buffered };
    const limits = this.context.limits;
    const forget = (): void => {
      if (this.subscriptions.get(stream) === stop) this.subscriptions.delete(stream);
      stop();
    };
    // The replay runs beside the socket's other messages (an unsubscribe stops it), a batch at a time.
    const budget = { bytes: limits.replay_bytes, pauseAbove: limits.send_buffer_bytes / 2 };
    (remote !== undefined
      ? followCluster(remote, this.context.feed, stream, filter, target, budget)
      : follow(this.context.feed, stream, after, native ? { key: 'native', accepts: () => true } : filter, target, budget)
    ).then(
      (result) => {
        if (!result.live) {
          forget();
          // The replay budget is spent: the client subscribes again from the cursor it got.
          if (result.cursor !== undefined) this.send({ type: 'unsubscribed', stream, reason: 'replay_budget', cursor: result.cursor });
          return;
        }
        if (!native) {
          stopLive = result.stop;
        } else {
          // Caught up: from the feed listener to the native topic (the listener covered the turns between).
          const topic = topicOf(stream);
          peer.subscribe!(topic);
          result.stop();
          stopLive = () => peer.unsubscribe?.(topic);
        }
        if (stopped) stopLive();
      },
      (error: unknown) => {
        forget();
        if (isAppError(error)) return this.error(error.status, error.message, stream);
        this.error(500, 'Internal Server Error', stream, error);
      },
    ).catch((error: unknown) => {
      // Whatever a handler above threw ends this subscription, never the process.
      forget();
      this.error(500, 'Internal Server Error', stream, error);
    });
  }

  private sendChange(change: Change): void {
    if (this.closed) return;
    // A client that does not read is dropped once its budget waits for it (checked before the
    // write, so one change larger than the budget still reaches a client that reads).
    if (this.peer.buffered > this.context.limits.send_buffer_bytes) {
      this.closed = true;
      this.peer.close(CLOSE_CODES.slowReader, 'slow reader: too much waits to be sent');
      return;
    }
    this.peer.send(socketMessage(change));
  }

  private send(message: Record<string, unknown>): void {
    if (!this.closed) this.peer.send(JSON.stringify(message));
  }

  private error(status: number, message: string, stream?: string, cause?: unknown): void {
    // A failure of ours: its detail goes to the log, never to the client.
    if (cause !== undefined) this.context.logger.error({ err: cause, stream, requestId: this.context.requestId }, 'a realtime subscription failed');
    this.send(stream === undefined ? { type: 'error', status, message } : { type: 'error', status, message, stream });
  }
}

/** `where`/`constraint` objects of a subscribe message as the list endpoint's query string. */
function filterQuery(where: unknown, constraint: unknown): string | { error: string } {
  const parts: string[] = [];
  const add = (name: string, value: unknown): string | undefined => {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
      parts.push(`${name}=${encodeURIComponent(value === null ? '' : String(value))}`);
      return undefined;
    }
    if (Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
      for (const v of value) parts.push(`${name}[]=${encodeURIComponent(String(v))}`);
      return undefined;
    }
    return `${name} must be a string, a number, a boolean or a list of them.`;
  };
  for (const [key, object] of [['where', where], ['constraint', constraint]] as const) {
    if (object === undefined) continue;
    if (object === null || typeof object !== 'object' || Array.isArray(object)) return { error: `"${key}" must be an object of field: value.` };
    for (const [field, value] of Object.entries(object as Record<string, unknown>)) {
      const problem = add(`${key}[${encodeURIComponent(field)}]`, value);
      if (problem !== undefined) return { error: problem };
    }
  }
  return parts.join('&');
}

/** The first error message of an envelope body. */
function messageOf(body: string | Uint8Array | undefined): string | undefined {
  if (body === undefined) return undefined;
  try {
    const parsed = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8')) as { errors?: Array<{ message?: string }> };
    return parsed.errors?.[0]?.message;
  } catch {
    return undefined;
  }
}
