import type { HttpReply } from './contracts.js';

/**
 * A reply frozen by `freezeReply`, with a place for what each transport derives from it once:
 * its head, as uWS header-line bytes or as node:http's header list. The places are private
 * fields: inside the object itself, which the answer reads anyway, where a memo object or a
 * WeakMap beside the reply was one more object to reach for each of the many replies a server
 * answers in turn (issue #33). No addon, copy or JSON sees them, and freezing leaves private
 * fields writable.
 */
class KeptReply {
  #uwsHead: Uint8Array | null = null;
  #nodeHead: string[] | undefined = undefined;

  constructor(reply: HttpReply) {
    // Only the fields the reply has, in one order: a copy made by spreading it is the same.
    const self = this as unknown as Record<string, unknown>;
    self.status = reply.status;
    if (reply.type !== undefined) self.type = reply.type;
    if (reply.headers !== undefined) self.headers = reply.headers;
    if (reply.body !== undefined) self.body = reply.body;
    if (reply.stream !== undefined) self.stream = reply.stream;
    if (reply.upgrade !== undefined) self.upgrade = reply.upgrade;
    Object.freeze(this);
  }

  static uwsHeadOf(reply: HttpReply): Uint8Array | null | undefined {
    return reply instanceof KeptReply ? reply.#uwsHead : undefined;
  }

  static keepUwsHead(reply: HttpReply, head: Uint8Array): void {
    if (reply instanceof KeptReply) reply.#uwsHead = head;
  }

  static nodeHeadOf(reply: HttpReply): string[] | undefined {
    return reply instanceof KeptReply ? reply.#nodeHead : undefined;
  }

  static keepNodeHead(reply: HttpReply, head: string[]): void {
    if (reply instanceof KeptReply) reply.#nodeHead = head;
  }
}

/**
 * Shared answers (see `HttpReply`): one made once and handed out again and again (a reply-cache
 * hit) is frozen with its header list and each pair, so whatever keeps something derived from
 * it (the compressor's answers, the transports' heads) may know it by identity. Answers a frozen
 * copy of `reply` (use it instead of `reply`), or `reply` itself when it is one already.
 */
export function freezeReply<T extends HttpReply>(reply: T): Readonly<T> {
  if (reply instanceof KeptReply) return reply;
  if (reply.headers !== undefined) {
    for (const pair of reply.headers) Object.freeze(pair);
    Object.freeze(reply.headers);
  }
  return new KeptReply(reply) as unknown as Readonly<T>;
}

/**
 * The uWS transport's head of a kept reply: its header lines as bytes (`uws-head.ts`); null
 * when not made yet, undefined when `reply` is not kept (not from `freezeReply`).
 */
export function uwsHeadOf(reply: HttpReply): Uint8Array | null | undefined {
  return KeptReply.uwsHeadOf(reply);
}

/** Keep the uWS head of `reply` (nothing for a reply that is not kept). */
export function keepUwsHead(reply: HttpReply, head: Uint8Array): void {
  KeptReply.keepUwsHead(reply, head);
}

/** The node:http transport's header list of a kept reply (see `NodeHttpServer.headOf`). */
export function nodeHeadOf(reply: HttpReply): string[] | undefined {
  return KeptReply.nodeHeadOf(reply);
}

/** Keep the node:http header list of `reply` (nothing for a reply that is not kept). */
export function keepNodeHead(reply: HttpReply, head: string[]): void {
  KeptReply.keepNodeHead(reply, head);
}

/** Whether a header list can never change: frozen, and each of its pairs too. */
export function headersFrozen(headers: ReadonlyArray<readonly [string, string]>): boolean {
  return Object.isFrozen(headers) && headers.every((pair) => Object.isFrozen(pair));
}
