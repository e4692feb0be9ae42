import { AppError } from '../../kernel/index.js';

/** The `realtime.limits` section (docs/realtime.md, "Limits"). */
export interface RealtimeLimits {
  sse_per_client: number;
  sse_total: number;
  sockets_per_client: number;
  sockets_total: number;
  subscriptions_per_socket: number;
  subscriptions_per_client: number;
  subscriptions_total: number;
  registry_bytes: number;
  send_buffer_bytes: number;
  replay_bytes: number;
}

export type Held = 'sse' | 'socket' | 'subscription';

/** Seconds a refused client is told to wait (`Retry-After`): long-lived slots free up slowly. */
export const RETRY_AFTER_SECONDS = 30;

/** Memory one held slot costs in the registry beyond its filter text (listener, closures, maps), for the budget. */
const SLOT_COST = 512;

/**
 * Who may hold how many long-lived realtime slots (Server-Sent Events streams, WebSocket
 * connections, subscriptions): at most so many per client (its authenticated user, else
 * its address) and in total, and the registry that holds them within a byte budget. A
 * client over its share is refused with 429, a node that is full with 503, both with
 * `Retry-After`; so one client cannot take the slots (and the fan-out time) of all others.
 */
export class Admission {
  private readonly perClient = new Map<string, number>();
  private readonly totals = new Map<Held, number>();
  private bytes = 0;

  constructor(private readonly limits: RealtimeLimits) {}

  /** The client a request counts for: its user when authenticated, else its address. */
  static clientOf(locals: Record<string, unknown>, ip: string): string {
    const user = locals.user as { id?: unknown } | undefined;
    // The anonymous caller (access plugin, id null) counts by its address like any unauthenticated one.
    return user !== undefined && user !== null && user.id !== undefined && user.id !== null ? `u:${String(user.id)}` : `ip:${ip}`;
  }

  /**
   * Throw the 429/503 AppError that would refuse a slot now, taking nothing: a reply can then
   * answer with its status before it commits to a stream (which takes the slot once it opens).
   */
  check(kind: Held, client: string, weight = 0): void {
    const [perClient, total] = this.limitsOf(kind);
    const mine = this.perClient.get(`${kind} ${client}`) ?? 0;
    const all = this.totals.get(kind) ?? 0;
    if (mine >= perClient) throw refused(429, `Too many ${NAMES[kind]} from this client: at most ${perClient}.`);
    if (all >= total || this.bytes + SLOT_COST + weight > this.limits.registry_bytes) throw refused(503, `This server holds as many ${NAMES[kind]} as it can take: try again later.`);
  }

  /** Take a slot, or throw the 429/503 AppError that refuses it. `weight`: the slot's own bytes (its filter). */
  take(kind: Held, client: string, weight = 0): () => void {
    this.check(kind, client, weight);
    const key = `${kind} ${client}`;
    const mine = this.perClient.get(key) ?? 0;
    const all = this.totals.get(kind) ?? 0;
    const cost = SLOT_COST + weight;
    this.perClient.set(key, mine + 1);
    this.totals.set(kind, all + 1);
    this.bytes += cost;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.perClient.get(key) ?? 1) - 1;
      if (left > 0) this.perClient.set(key, left);
      else this.perClient.delete(key);
      this.totals.set(kind, (this.totals.get(kind) ?? 1) - 1);
      this.bytes -= cost;
    };
  }

  /** For /readyz details. */
  report(): Record<string, number> {
    return { sse: this.totals.get('sse') ?? 0, sockets: this.totals.get('socket') ?? 0, subscriptions: this.totals.get('subscription') ?? 0, registry_bytes: this.bytes };
  }

  private limitsOf(kind: Held): [number, number] {
    const l = this.limits;
    if (kind === 'sse') return [l.sse_per_client, l.sse_total];
    if (kind === 'socket') return [l.sockets_per_client, l.sockets_total];
    return [l.subscriptions_per_client, l.subscriptions_total];
  }
}

const NAMES: Record<Held, string> = { sse: 'event streams', socket: 'WebSocket connections', subscription: 'subscriptions' };

function refused(status: 429 | 503, message: string): AppError {
  const error = new AppError(status, message);
  error.headers = [['Retry-After', String(RETRY_AFTER_SECONDS)]];
  return error;
}
