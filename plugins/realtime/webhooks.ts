import { createHmac, randomUUID } from 'node:crypto';
import { backoffDelay, type Logger } from '../../kernel/index.js';
import type { Change, ChangeEvent } from './feed.js';
import { JsonlLog } from './jsonl-log.js';
import { changeJson } from './subscription.js';

export interface WebhookConfig {
  url: string;
  /** Stream ids, or absent for every stream. */
  streams?: string[];
  /** Events, or absent for all three. */
  events?: ChangeEvent[];
  /** HMAC key of `Streams-Signature`. */
  secret?: string;
}

/**
 * A webhook declared in a stream definition (`"webhooks": [...]`): that stream's changes
 * only. Definitions are readable through the API (and may be stored in a shared database),
 * so the signing secret is never written there: `secret_env` names the environment variable
 * that holds it.
 */
export interface StreamWebhook {
  url: string;
  events?: ChangeEvent[];
  secret_env?: string;
}

/** JSON Schema of a definition's `webhooks` key (registered through `definition.extend`). */
export const STREAM_WEBHOOKS_SCHEMA = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: { type: 'string', pattern: '^https?://', maxLength: 2048 },
      events: { type: 'array', items: { enum: ['created', 'updated', 'deleted'] }, uniqueItems: true },
      // Only variables named for this purpose: a definition (editable over the API) must not be
      // able to sign deliveries with, and so expose to guessing, any secret of the process.
      secret_env: { type: 'string', pattern: '^STREAMS_WEBHOOK_[A-Z0-9_]{1,100}$' },
    },
  },
};

export interface WebhookSettings {
  timeoutMs: number;
  /** Attempts before a delivery is given up (logged as an error). */
  maxAttempts: number;
  /** First retry after about this long; each next one waits twice as long (with jitter), up to an hour. */
  retryBaseMs: number;
}

interface Delivery {
  id: string;
  url: string;
  /** The stream of the change, and whether the webhook is the stream definition's own (for its secret). */
  stream?: string;
  fromStream?: boolean;
  body: string;
  attempts: number;
  /** When the next attempt may run (ms since the epoch). */
  due: number;
}

type OutboxRecord = { add: Delivery } | { done: string } | { retry: string; attempts: number; due: number };

interface EndpointHealth {
  url: string;
  failures: number;
  last_error?: string;
  last_failure_at?: string;
}

const MAX_BACKOFF_MS = 60 * 60 * 1000;
/**
 * Deliveries in flight to one endpoint at a time: a backlog (an endpoint back after an outage)
 * goes out a few at a time instead of opening one connection per pending delivery.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 8;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

/**
 * Webhooks (issue #19): each change a webhook asks for becomes a delivery in a durable
 * outbox (a JSON-lines file, fsynced before the write that caused it is acknowledged), so
 * a delivery survives a crash or restart: at-least-once, receivers dedupe by the
 * `Streams-Delivery` id. Deliveries are POSTed with undici; a non-2xx answer or a timeout
 * is retried with exponential backoff and jitter. Delivering never blocks a write: only the
 * outbox append is awaited. A failing endpoint shows in /readyz details and in the log.
 */
export class Webhooks {
  private readonly pending = new Map<string, Delivery>();
  private readonly log: JsonlLog<OutboxRecord>;
  private readonly health = new Map<string, EndpointHealth>();
  private readonly inFlight = new Set<string>();
  /** Deliveries in flight per endpoint URL (at most MAX_IN_FLIGHT_PER_ENDPOINT each). */
  private readonly busy = new Map<string, number>();
  /** A due delivery waited for a busy endpoint: look again when one finishes. */
  private waiting = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private closed = false;
  private linesInFile = 0;

  constructor(
    file: string,
    private readonly hooks: WebhookConfig[],
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
    /** The webhooks a stream's definition declares (read at each change and each attempt: definitions change live). */
    private readonly streamHooks: (stream: string) => StreamWebhook[] = () => [],
  ) {
    this.log = new JsonlLog<OutboxRecord>(file, true, logger);
  }

  /** Read the outbox (boot) and start delivering what is pending. */
  async load(): Promise<void> {
    const records = await this.log.read();
    this.linesInFile = records.length;
    for (const record of records) {
      if ('add' in record) this.pending.set(record.add.id, record.add);
      else if ('done' in record) this.pending.delete(record.done);
      else if ('retry' in record) {
        const delivery = this.pending.get(record.retry);
        if (delivery) Object.assign(delivery, { attempts: record.attempts, due: record.due });
      }
    }
    // One attempt each right away (a restart often follows a fix of the endpoint or the
    // config); a failure then backs off from the attempts already made.
    const now = Date.now();
    for (const delivery of this.pending.values()) delivery.due = Math.min(delivery.due, now);
    if (this.pending.size > 0) this.logger.info({ pending: this.pending.size }, 'webhook deliveries pending from before the restart');
    this.schedule(0);
  }

  /** Queue the deliveries of one change; resolves once they are in the outbox on disk. */
  async enqueue(change: Change): Promise<void> {
    const added: Delivery[] = [];
    // The body is rendered once, and only when some hook wants the change (most writes: none).
    let rendered: string | undefined;
    const body = (): string => (rendered ??= `{"event":"${change.event}","cursor":${JSON.stringify(change.cursor)},${changeJson(change).slice(1)}`);
    const stream = change.stream;
    for (const hook of this.hooks) {
      if (hook.streams !== undefined && !hook.streams.includes(stream)) continue;
      if (hook.events !== undefined && !hook.events.includes(change.event)) continue;
      added.push({ id: randomUUID(), url: hook.url, stream, body: body(), attempts: 0, due: Date.now() });
    }
    for (const hook of this.streamHooks(stream)) {
      if (hook.events !== undefined && !hook.events.includes(change.event)) continue;
      added.push({ id: randomUUID(), url: hook.url, stream, fromStream: true, body: body(), attempts: 0, due: Date.now() });
    }
    if (added.length === 0) return;
    await Promise.all(added.map((delivery) => this.log.append({ add: delivery })));
    this.linesInFile += added.length;
    for (const delivery of added) this.pending.set(delivery.id, delivery);
    this.schedule(0);
  }

  /** For /readyz details: endpoints whose last delivery failed, and how many wait. */
  report(): Record<string, unknown> {
    const failing = [...this.health.values()].filter((h) => h.failures > 0);
    const out: Record<string, unknown> = {};
    if (failing.length > 0) out.failing = failing;
    if (this.pending.size > 0) out.pending = this.pending.size;
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.log.idle();
  }

  /** Wake up in `delayMs` unless an earlier wake-up is already set (each one looks at every delivery). */
  private schedule(delayMs: number): void {
    if (this.closed) return;
    const at = Date.now() + Math.max(0, delayMs);
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.deliverDue(), Math.max(0, delayMs));
    this.timer.unref();
  }

  private deliverDue(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    this.waiting = false;
    const now = Date.now();
    let next = Infinity;
    // Oldest first (insertion order), so a backlog drains in order of the changes.
    for (const delivery of this.pending.values()) {
      if (this.inFlight.has(delivery.id)) continue;
      if (delivery.due > now) next = Math.min(next, delivery.due);
      else if ((this.busy.get(delivery.url) ?? 0) >= MAX_IN_FLIGHT_PER_ENDPOINT) this.waiting = true;
      else void this.attempt(delivery);
    }
    if (next !== Infinity) this.schedule(next - now);
  }

  private async attempt(delivery: Delivery): Promise<void> {
    if (delivery.fromStream && this.streamHookOf(delivery) === undefined) {
      // The stream no longer declares it (or its host is no longer allowed): never sent unsigned.
      this.logger.warn({ url: delivery.url, stream: delivery.stream, delivery: delivery.id }, 'webhook delivery dropped: its stream no longer declares that webhook');
      this.pending.delete(delivery.id);
      await this.record({ done: delivery.id });
      return;
    }
    this.inFlight.add(delivery.id);
    this.busy.set(delivery.url, (this.busy.get(delivery.url) ?? 0) + 1);
    const secret = this.secretOf(delivery);
    const unix = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'streams-kernel-webhooks',
      'streams-delivery': delivery.id,
    };
    if (secret) headers['streams-signature'] = signature(secret, delivery.body, unix);
    let failure: string | undefined;
    try {
      // undici is loaded at the first delivery: an application without webhooks never pays for it.
      const { request } = await import('undici');
      const answer = await request(delivery.url, {
        method: 'POST',
        headers,
        body: delivery.body,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
      });
      await answer.body.dump();
      if (answer.statusCode < 200 || answer.statusCode >= 300) failure = `answered ${answer.statusCode}`;
    } catch (error) {
      failure = (error as Error).message || String(error);
    } finally {
      this.inFlight.delete(delivery.id);
      const left = (this.busy.get(delivery.url) ?? 1) - 1;
      if (left > 0) this.busy.set(delivery.url, left);
      else this.busy.delete(delivery.url);
      if (this.waiting) this.schedule(0);
    }
    if (this.closed) return;
    const health = this.health.get(delivery.url) ?? { url: delivery.url, failures: 0 };
    this.health.set(delivery.url, health);
    if (failure === undefined) {
      health.failures = 0;
      delete health.last_error;
      this.pending.delete(delivery.id);
      await this.record({ done: delivery.id });
      return;
    }
    health.failures++;
    health.last_error = failure;
    health.last_failure_at = new Date().toISOString();
    delivery.attempts++;
    if (delivery.attempts >= this.settings.maxAttempts) {
      this.logger.error({ url: delivery.url, delivery: delivery.id, attempts: delivery.attempts, reason: failure }, 'webhook delivery given up');
      this.pending.delete(delivery.id);
      await this.record({ done: delivery.id });
      return;
    }
    const backoff = backoffDelay(delivery.attempts, this.settings.retryBaseMs, MAX_BACKOFF_MS);
    // Full jitter between half and all of the backoff: receivers that failed together do not retry together.
    delivery.due = Date.now() + Math.round(backoff * (0.5 + Math.random() / 2));
    this.logger.warn({ url: delivery.url, delivery: delivery.id, attempts: delivery.attempts, reason: failure, retry_in_ms: delivery.due - Date.now() }, 'webhook delivery failed; retrying');
    await this.record({ retry: delivery.id, attempts: delivery.attempts, due: delivery.due });
    this.schedule(delivery.due - Date.now());
  }

  /** The signing secret of a delivery's webhook as configured now (a restart may have changed it). */
  private secretOf(delivery: Delivery): string | undefined {
    if (!delivery.fromStream) {
      const stream = delivery.stream;
      return this.hooks.find((h) => h.url === delivery.url && (stream === undefined || h.streams === undefined || h.streams.includes(stream)))?.secret;
    }
    const hook = this.streamHookOf(delivery);
    if (hook?.secret_env === undefined) return undefined;
    const secret = process.env[hook.secret_env];
    if (!secret) this.logger.warn({ url: delivery.url, stream: delivery.stream, variable: hook.secret_env }, 'the webhook secret variable is not set: delivering unsigned');
    return secret || undefined;
  }

  private streamHookOf(delivery: Delivery): StreamWebhook | undefined {
    return delivery.stream === undefined ? undefined : this.streamHooks(delivery.stream).find((h) => h.url === delivery.url);
  }

  private async record(record: OutboxRecord): Promise<void> {
    try {
      await this.log.append(record);
      if (++this.linesInFile > 4 * this.pending.size + 1000) {
        await this.log.rewrite(() => {
          this.linesInFile = this.pending.size;
          return [...this.pending.values()].map((add) => ({ add }));
        });
      }
    } catch (error) {
      this.logger.error({ err: error, path: this.log.file }, 'the webhook outbox could not be written');
    }
  }
}
