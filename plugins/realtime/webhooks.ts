import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { backoffDelay, type Logger } from '../../kernel/index.js';
import { DeadLetters } from './dead-letters.js';
import type { Change, ChangeEvent } from './feed.js';
import { readLegacyOutbox } from './legacy-files.js';
import { SegmentLog, type RecordRef, type Segment } from './segment-log.js';
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
      // Only the variable the operator maps to this stream (`realtime.stream_webhook_secrets`,
      // checked when the definition is loaded or written): a definition, editable over the API,
      // can neither sign with another stream's secret nor with any other secret of the process.
      secret_env: { type: 'string', pattern: '^STREAMS_WEBHOOK_[A-Z0-9_]{1,100}$' },
    },
  },
};

export interface WebhookSettings {
  timeoutMs: number;
  /** Attempts before a delivery is moved to the dead letters. */
  maxAttempts: number;
  /** First retry after about this long; each next one waits twice as long (with jitter), up to an hour. */
  retryBaseMs: number;
  /** A delivery still failing this long after its change was made goes to the dead letters (ms). */
  maxAgeMs: number;
  /** Bytes of the outbox on disk: past them the oldest pending deliveries go to the dead letters. */
  outboxBytes: number;
  /** Bytes of the dead-letter file (and as many in its one rotated predecessor). */
  deadLetterBytes: number;
  /** Stream id -> the environment variable with its own webhooks' secret. */
  streamSecrets: Record<string, string>;
}

/** A pending delivery as memory holds it: its body stays in the outbox on disk (`ref`). */
interface Delivery {
  id: string;
  url: string;
  /** The stream of the change, and whether the webhook is the stream definition's own (for its secret). */
  stream?: string;
  fromStream?: boolean;
  attempts: number;
  /** When the next attempt may run (ms since the epoch). */
  due: number;
  /** When its change was made (ms since the epoch): past `maxAgeMs` it is a dead letter. */
  created: number;
  ref: RecordRef;
}

/** The `add` line of a delivery: everything but where it lies, with its body. */
type Added = Omit<Delivery, 'ref'> & { body: string };

/** Deliveries of a segment's `add` lines still pending: the segment goes once none is. */
interface OutboxSegment {
  pending: number;
}

interface EndpointHealth {
  url: string;
  failures: number;
  last_error?: string;
  last_failure_at?: string;
}

const MAX_BACKOFF_MS = 60 * 60 * 1000;

/**
 * After a failed attempt (`attempts` made so far, the change made at `createdMs`): when to try
 * again (a time in ms), or why to give up (a string for the dead letters). One policy for the
 * node's own outbox and the shared one of `database` streams.
 */
export function nextAttempt(settings: Pick<WebhookSettings, 'maxAttempts' | 'maxAgeMs' | 'retryBaseMs'>, attempts: number, createdMs: number, failure: string): number | string {
  if (attempts >= settings.maxAttempts) return `${attempts} attempts failed; the last: ${failure}`;
  if (Date.now() - createdMs >= settings.maxAgeMs) return `still failing after ${Math.round(settings.maxAgeMs / 1000)} s; the last: ${failure}`;
  const backoff = backoffDelay(attempts, settings.retryBaseMs, MAX_BACKOFF_MS);
  // Full jitter between half and all of the backoff: receivers that failed together do not retry together.
  return Date.now() + Math.round(backoff * (0.5 + Math.random() / 2));
}
/**
 * Deliveries in flight to one endpoint at a time: a backlog (an endpoint back after an outage)
 * goes out a few at a time instead of opening one connection per pending delivery.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 8;

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<delivery id>.<body>">`: the timestamp, the
 * id receivers dedupe on and the body are all signed, so a captured delivery can be replayed
 * neither later (the receiver rejects a stale `t`) nor under a new id.
 */
export function signature(secret: string, deliveryId: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${deliveryId}.${body}`).digest('hex')}`;
}

/**
 * Webhooks (issues #19, #26): each change a webhook asks for becomes a delivery in a durable
 * outbox (segment files of JSON lines, fsynced before the write that caused it is
 * acknowledged), so a delivery survives a crash or restart: at-least-once, receivers dedupe
 * by the signed `Streams-Delivery` id. Memory holds where each pending delivery's body lies,
 * not the body. Deliveries are POSTed with undici; a non-2xx answer or a timeout is retried
 * with exponential backoff and jitter, until `maxAttempts` or `maxAgeMs`: then the delivery
 * is a dead letter (a file beside the outbox, listed in /readyz), never retried forever.
 * The outbox is bounded by bytes: past them the oldest pending deliveries become dead
 * letters too. Delivering never blocks a write: only the outbox append is awaited.
 */
export class Webhooks {
  private readonly pending = new Map<string, Delivery>();
  private readonly log: SegmentLog;
  private readonly dead: DeadLetters;
  private readonly health = new Map<string, EndpointHealth>();
  private readonly inFlight = new Set<string>();
  /** Deliveries being moved to the dead letters (see bury). */
  private readonly burying = new Set<string>();
  /** Deliveries in flight per endpoint URL (at most MAX_IN_FLIGHT_PER_ENDPOINT each). */
  private readonly busy = new Map<string, number>();
  /** A due delivery waited for a busy endpoint: look again when one finishes. */
  private waiting = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private closed = false;

  constructor(
    private readonly folder: string,
    private readonly hooks: WebhookConfig[],
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
    /** The webhooks a stream's definition declares (read at each change and each attempt: definitions change live). */
    private readonly streamHooks: (stream: string) => StreamWebhook[] = () => [],
  ) {
    this.log = new SegmentLog(folder, 'outbox', { segmentBytes: Math.max(64 * 1024, Math.floor(settings.outboxBytes / 8)), maxLineBytes: 32 * 1024 * 1024, durable: true }, logger);
    this.dead = new DeadLetters(path.join(folder, 'dead-letters.jsonl'), settings.deadLetterBytes, logger);
  }

  /** Read the outbox (boot), as streams of lines, and start delivering what is pending. */
  async load(): Promise<void> {
    // An outbox over twice its budget was not left by this version: its oldest segments go (logged).
    await this.log.open(2 * this.settings.outboxBytes, (line, ref) => this.readLine(line, ref));
    await readLegacyOutbox(path.join(this.folder, 'outbox.jsonl'), 32 * 1024 * 1024, this.logger, async (add) => {
      if (typeof add.id === 'string' && typeof add.url === 'string' && typeof add.body === 'string') {
        await this.add({ ...(add as unknown as Added), created: typeof add.created === 'number' ? add.created : Date.now() });
      }
    });
    await this.dead.load();
    // One attempt each right away (a restart often follows a fix of the endpoint or the
    // config); a failure then backs off from the attempts already made.
    const now = Date.now();
    for (const delivery of this.pending.values()) delivery.due = Math.min(delivery.due, now);
    if (this.pending.size > 0) this.logger.info({ pending: this.pending.size }, 'webhook deliveries pending from before the restart');
    this.dropFinishedSegments();
    this.schedule(0);
  }

  private readLine(line: string, ref: RecordRef): void {
    let record: { add?: Added; done?: string; retry?: string; attempts?: number; due?: number };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      return;
    }
    if (record.add !== undefined && typeof record.add.id === 'string') {
      const { body: _body, ...rest } = record.add;
      this.track({ ...rest, created: typeof rest.created === 'number' ? rest.created : Date.now(), ref });
    } else if (typeof record.done === 'string') {
      this.untrack(record.done);
    } else if (typeof record.retry === 'string') {
      const delivery = this.pending.get(record.retry);
      if (delivery) Object.assign(delivery, { attempts: record.attempts, due: record.due });
    }
  }

  /** The webhooks that want a change: the configured ones and the stream definition's own. */
  targetsOf(change: Change): Array<{ url: string; fromStream?: boolean }> {
    const out: Array<{ url: string; fromStream?: boolean }> = [];
    const stream = change.stream;
    for (const hook of this.hooks) {
      if (hook.streams !== undefined && !hook.streams.includes(stream)) continue;
      if (hook.events !== undefined && !hook.events.includes(change.event)) continue;
      out.push({ url: hook.url });
    }
    for (const hook of this.streamHooks(stream)) {
      if (hook.events !== undefined && !hook.events.includes(change.event)) continue;
      out.push({ url: hook.url, fromStream: true });
    }
    return out;
  }

  /** Queue the deliveries of one change; resolves once they are in the outbox on disk. */
  async enqueue(change: Change): Promise<void> {
    const targets = this.targetsOf(change);
    if (targets.length === 0) return;
    const body = webhookBody(change);
    const now = Date.now();
    const added: Added[] = targets.map((t) => ({ id: randomUUID(), url: t.url, stream: change.stream, ...(t.fromStream ? { fromStream: true } : {}), body, attempts: 0, due: now, created: now }));
    await Promise.all(added.map((delivery) => this.add(delivery)));
    this.enforceBudget();
    this.schedule(0);
  }

  /** For /readyz details: endpoints whose last delivery failed, how many wait, the dead letters. */
  report(): Record<string, unknown> {
    const failing = [...this.health.values()].filter((h) => h.failures > 0);
    const out: Record<string, unknown> = {};
    if (failing.length > 0) out.failing = failing;
    if (this.pending.size > 0) out.pending = this.pending.size;
    const dead = this.dead.report();
    if (dead !== undefined) out.dead_letters = dead;
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.log.close();
    await this.dead.close();
  }

  /** Write a delivery's `add` line (durable once this resolves) and track it. */
  private async add(delivery: Added): Promise<void> {
    const { ref, written } = this.log.append(JSON.stringify({ add: delivery }));
    const { body: _body, ...rest } = delivery;
    this.track({ ...rest, ref });
    try {
      await written;
    } catch (error) {
      this.untrack(delivery.id);
      throw error;
    }
  }

  private track(delivery: Delivery): void {
    this.pending.set(delivery.id, delivery);
    const meta = (delivery.ref.segment.meta as OutboxSegment | undefined) ?? (delivery.ref.segment.meta = { pending: 0 } as OutboxSegment);
    meta.pending++;
  }

  private untrack(id: string): void {
    const delivery = this.pending.get(id);
    if (delivery === undefined) return;
    this.pending.delete(id);
    (delivery.ref.segment.meta as OutboxSegment).pending--;
  }

  /** Segments whose deliveries are all finished go, oldest first (a later one may hold the `done` lines of earlier ones). */
  private dropFinishedSegments(): void {
    for (;;) {
      const oldest = this.log.segments[0];
      if (oldest === undefined || ((oldest.meta as OutboxSegment | undefined)?.pending ?? 0) > 0) return;
      if (this.log.dropOldest() === undefined) return;
    }
  }

  /** Past the outbox budget the oldest pending deliveries become dead letters, so their segments can go. */
  private enforceBudget(): void {
    if (this.log.totalBytes <= this.settings.outboxBytes) return;
    const oldest: Segment | undefined = this.log.segments[0];
    if (oldest === undefined) return;
    if (oldest === this.log.segments[this.log.segments.length - 1]) this.log.roll();
    for (const delivery of [...this.pending.values()]) {
      if (delivery.ref.segment !== oldest) continue;
      if (this.inFlight.has(delivery.id)) continue;
      this.bury(delivery, `the outbox passed realtime.outbox_bytes (${this.settings.outboxBytes} bytes)`).catch((error: unknown) =>
        this.logger.error({ err: error, delivery: delivery.id }, 'a webhook delivery could not be moved to the dead letters'),
      );
    }
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
      else void this.attempt(delivery).catch((error: unknown) => this.logger.error({ err: error, url: delivery.url, delivery: delivery.id }, 'a webhook delivery failed unexpectedly'));
    }
    if (next !== Infinity) this.schedule(next - now);
  }

  /**
   * Whether a delivery may be sent now: `dropped` when its stream no longer declares its
   * webhook (never sent unsigned), `bad-secret` when the definition names a variable that is
   * not its stream's; else the secret to sign with (undefined: unsigned).
   */
  checkTarget(target: { id: string; url: string; stream?: string; fromStream?: boolean }): { secret: string | undefined } | 'dropped' | 'bad-secret' {
    if (target.fromStream && this.streamHookOf(target) === undefined) {
      this.logger.warn({ url: target.url, stream: target.stream, delivery: target.id }, 'webhook delivery dropped: its stream no longer declares that webhook');
      return 'dropped';
    }
    const secret = this.secretOf(target);
    return secret === false ? 'bad-secret' : { secret };
  }

  /** POST one delivery (signed with `secret`); resolves with why it failed, or undefined. Shared with shared-outbox.ts. */
  async post(target: { id: string; url: string }, body: string, secret: string | undefined, signal?: AbortSignal): Promise<string | undefined> {
    let failure: string | undefined;
    try {
      const unix = Math.floor(Date.now() / 1000);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'streams-kernel-webhooks',
        'streams-delivery': target.id,
      };
      if (secret) headers['streams-signature'] = signature(secret, target.id, body, unix);
      // undici is loaded at the first delivery: an application without webhooks never pays for it.
      const { request } = await import('undici');
      const answer = await request(target.url, {
        method: 'POST',
        headers,
        body,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
        signal,
      });
      await answer.body.dump();
      if (answer.statusCode < 200 || answer.statusCode >= 300) failure = `answered ${answer.statusCode}`;
    } catch (error) {
      failure = (error as Error).message || String(error);
    }
    const health = this.health.get(target.url) ?? { url: target.url, failures: 0 };
    this.health.set(target.url, health);
    if (failure === undefined) {
      health.failures = 0;
      delete health.last_error;
    } else {
      health.failures++;
      health.last_error = failure;
      health.last_failure_at = new Date().toISOString();
    }
    return failure;
  }

  /** The dead-letter file (the shared outbox of `database` streams buries there too). */
  get deadLetters(): DeadLetters {
    return this.dead;
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const check = this.checkTarget(delivery);
    if (check === 'dropped') return this.finish(delivery);
    if (check === 'bad-secret') return this.bury(delivery, 'its secret_env is not the variable realtime.stream_webhook_secrets maps to its stream');
    this.inFlight.add(delivery.id);
    this.busy.set(delivery.url, (this.busy.get(delivery.url) ?? 0) + 1);
    let failure: string | undefined;
    try {
      failure = await this.post(delivery, await this.bodyOf(delivery), check.secret);
    } catch (error) {
      failure = (error as Error).message || String(error);
    } finally {
      this.inFlight.delete(delivery.id);
      const left = (this.busy.get(delivery.url) ?? 1) - 1;
      if (left > 0) this.busy.set(delivery.url, left);
      else this.busy.delete(delivery.url);
      if (this.waiting) this.schedule(0);
    }
    if (this.closed || !this.pending.has(delivery.id)) return;
    if (failure === undefined) {
      await this.finish(delivery);
      return;
    }
    delivery.attempts++;
    const next = nextAttempt(this.settings, delivery.attempts, delivery.created, failure);
    if (typeof next === 'string') return this.bury(delivery, next);
    delivery.due = next;
    this.logger.warn({ url: delivery.url, delivery: delivery.id, attempts: delivery.attempts, reason: failure, retry_in_ms: delivery.due - Date.now() }, 'webhook delivery failed; retrying');
    await this.record(JSON.stringify({ retry: delivery.id, attempts: delivery.attempts, due: delivery.due }));
    this.schedule(delivery.due - Date.now());
  }

  private async bodyOf(delivery: Delivery): Promise<string> {
    const { add } = JSON.parse(await this.log.read(delivery.ref)) as { add: Added };
    return add.body;
  }

  /** Delivered (or dropped on purpose): out of the outbox. */
  private async finish(delivery: Delivery): Promise<void> {
    this.untrack(delivery.id);
    await this.record(JSON.stringify({ done: delivery.id }));
    this.dropFinishedSegments();
  }

  /** Given up: to the dead letters (with its body), out of the outbox. */
  private async bury(delivery: Delivery, reason: string): Promise<void> {
    // Once: a delivery stays pending while its body is read and its letter written, and each
    // publish past the budget looks at the oldest segment again (a faster writer buried one
    // delivery twice: two dead letters, CI's webhooks test counted 31 of 30).
    if (!this.pending.has(delivery.id) || this.burying.has(delivery.id)) return;
    this.burying.add(delivery.id);
    try {
      let body: string | undefined;
      try {
        body = await this.bodyOf(delivery);
      } catch {
        body = undefined;
      }
      if (!this.pending.has(delivery.id)) return;
      this.logger.error({ url: delivery.url, delivery: delivery.id, stream: delivery.stream, attempts: delivery.attempts, reason }, 'webhook delivery given up: moved to the dead letters');
      await this.dead.add({ id: delivery.id, url: delivery.url, stream: delivery.stream ?? null, attempts: delivery.attempts, created: new Date(delivery.created).toISOString(), reason, body: body ?? null });
      await this.finish(delivery);
    } finally {
      this.burying.delete(delivery.id);
    }
  }

  /**
   * The signing secret of a delivery's webhook as configured now (a restart may have changed
   * it); undefined: unsigned; false: its definition names a variable that is not its stream's.
   */
  private secretOf(delivery: { url: string; stream?: string; fromStream?: boolean }): string | undefined | false {
    if (!delivery.fromStream) {
      const stream = delivery.stream;
      return this.hooks.find((h) => h.url === delivery.url && (stream === undefined || h.streams === undefined || h.streams.includes(stream)))?.secret;
    }
    const hook = this.streamHookOf(delivery);
    const variable = delivery.stream === undefined ? undefined : streamSecretVariable(this.settings.streamSecrets, delivery.stream);
    if (hook?.secret_env !== undefined && hook.secret_env !== variable) return false;
    if (variable === undefined) return undefined;
    const secret = process.env[variable];
    if (!secret) this.logger.warn({ url: delivery.url, stream: delivery.stream, variable }, 'the webhook secret variable is not set: delivering unsigned');
    return secret || undefined;
  }

  private streamHookOf(delivery: { url: string; stream?: string }): StreamWebhook | undefined {
    return delivery.stream === undefined ? undefined : this.streamHooks(delivery.stream).find((h) => h.url === delivery.url);
  }

  private async record(line: string): Promise<void> {
    try {
      await this.log.append(line).written;
    } catch (error) {
      this.logger.error({ err: error, path: this.log.dir }, 'the webhook outbox could not be written');
    }
  }
}

/** A webhook's body: `{"event","cursor","stream","id","data"}` (the same on every node for a `database` stream's change). */
export function webhookBody(change: Change): string {
  return `{"event":"${change.event}","cursor":${JSON.stringify(change.cursor)},${changeJson(change).slice(1)}`;
}

/** The variable with a stream's own webhooks' secret (`realtime.stream_webhook_secrets`), if any. */
export function streamSecretVariable(secrets: Record<string, string>, stream: string): string | undefined {
  return Object.hasOwn(secrets, stream) ? secrets[stream] : undefined;
}
