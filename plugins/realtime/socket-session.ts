import { assertSafeKeys, type HttpServer, type WebSocketPeer, type WebSocketSession } from '../http/index.js';
import type { Change, ChangeFeed } from './feed.js';
import { socketMessage, topicOf } from './subscription.js';
import { PROBE, type Probe } from './changes-endpoint.js';
import { isAppError, type Logger } from '../../kernel/index.js';

/** Streams one socket may follow at once. */
const MAX_SUBSCRIPTIONS = 100;
/** Messages of one socket waiting for the one being handled; more are refused (429). */
const MAX_QUEUED = 64;

export interface SessionContext {
  feed: ChangeFeed;
  server: HttpServer;
  /** The interface prefix the socket was opened under (`/api`). */
  prefix: string;
  /** The upgrade request's headers (authorization, cookies, host) and address, for each access check. */
  headers: Record<string, string>;
  ip: string;
  logger: Logger;
  onClose(session: RealtimeSession): void;
}

/**
 * One WebSocket client of `<prefix>/realtime`. Each `subscribe` is checked by routing the
 * GET it stands for (`<prefix>/streams/{stream}/changes?where...`) through the server, so a
 * subscription gets exactly the answer of the gate, the interface's middleware (auth,
 * throttle) and the endpoint's own checks (unknown stream, bad filter, expired cursor).
 */
export class RealtimeSession implements WebSocketSession {
  private readonly subscriptions = new Map<string, () => void>();
  private closed = false;
  /** The messages of a socket are handled one after another, in the order sent. */
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    private readonly peer: WebSocketPeer,
    private readonly context: SessionContext,
  ) {}

  onMessage(text: string): void {
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
    if (this.subscriptions.size >= MAX_SUBSCRIPTIONS) return this.error(429, `A socket follows at most ${MAX_SUBSCRIPTIONS} streams.`, stream);
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
    // Every change of the stream, on a transport with native pub/sub (uWS): one topic per
    // stream, written to all its subscribers by uWS itself (the plugin publishes each change
    // once); filtered subscriptions, and node:http, get each change from a feed listener.
    const { peer } = this;
    const topic = !subscription.filtered && peer.subscribe !== undefined && this.context.server.publish !== undefined ? topicOf(stream) : undefined;
    let resumed;
    try {
      resumed = this.context.feed.resume(
        stream,
        subscription.since,
        topic === undefined
          ? (change) => {
              if (subscription.accepts(change)) this.sendChange(change);
            }
          : undefined,
      );
    } catch (error) {
      if (isAppError(error)) return this.error(error.status, error.message, stream);
      throw error;
    }
    // Replay and subscription in this same turn of the event loop: no change falls between.
    if (topic !== undefined) {
      peer.subscribe!(topic);
      this.subscriptions.set(stream, () => peer.unsubscribe?.(topic));
    } else {
      this.subscriptions.set(stream, resumed.unsubscribe);
    }
    this.send({ type: 'subscribed', stream, cursor: this.context.feed.latest ?? null });
    for (const change of resumed.replay) if (subscription.accepts(change)) this.sendChange(change);
  }

  private sendChange(change: Change): void {
    if (!this.closed) this.peer.send(socketMessage(change));
  }

  private send(message: Record<string, unknown>): void {
    if (!this.closed) this.peer.send(JSON.stringify(message));
  }

  private error(status: number, message: string, stream?: string, cause?: unknown): void {
    // A failure of ours: its detail goes to the log, never to the client.
    if (cause !== undefined) this.context.logger.error({ err: cause, stream }, 'a realtime subscription failed');
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
