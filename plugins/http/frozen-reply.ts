import type { HttpReply } from './contracts.js';

/** Where a frozen reply keeps its memo (a symbol of this module: no addon reaches it). */
const MEMO = Symbol('reply memo');

/**
 * What the transport derived from a frozen reply, kept on the reply itself: its head, as uWS
 * bytes or as node:http's header list. Found by one property read of an object the answer
 * reads anyway, where a WeakMap beside the reply was a hash table probe of its own: one more
 * place in memory for each of the many replies a server answers in turn (issue #33).
 */
export interface ReplyMemo {
  uwsHead?: object;
  nodeHead?: string[];
}

/**
 * Shared answers (see `HttpReply`): one made once and handed out again and again (a reply-cache
 * hit) is frozen with its header list and each pair, so whatever keeps something derived from
 * it (the compressor's answers, uWS' head bytes) may know it by identity. It gets an empty memo
 * (`memoOf`), not enumerable: a copy made by spreading it (`{ ...reply, body }`) has none.
 */
export function freezeReply<T extends HttpReply>(reply: T): Readonly<T> {
  if (reply.headers !== undefined) {
    for (const pair of reply.headers) Object.freeze(pair);
    Object.freeze(reply.headers);
  }
  if (!Object.isFrozen(reply)) Object.defineProperty(reply, MEMO, { value: {} satisfies ReplyMemo });
  return Object.freeze(reply);
}

/** The memo of a reply frozen by `freezeReply`, or undefined for any other reply. */
export function memoOf(reply: HttpReply): ReplyMemo | undefined {
  return (reply as { [MEMO]?: ReplyMemo })[MEMO];
}

/** Whether a header list can never change: frozen, and each of its pairs too. */
export function headersFrozen(headers: ReadonlyArray<readonly [string, string]>): boolean {
  return Object.isFrozen(headers) && headers.every((pair) => Object.isFrozen(pair));
}
