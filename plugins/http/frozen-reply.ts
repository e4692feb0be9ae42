import type { HttpReply } from './contracts.js';

/**
 * Shared answers (see `HttpReply`): one made once and handed out again and again (a reply-cache
 * hit) is frozen with its header list and each pair, so whatever keeps something derived from
 * it (the compressor's answers, uWS' head bytes) may know it by identity.
 */
export function freezeReply<T extends HttpReply>(reply: T): Readonly<T> {
  if (reply.headers !== undefined) {
    for (const pair of reply.headers) Object.freeze(pair);
    Object.freeze(reply.headers);
  }
  return Object.freeze(reply);
}

/** Whether a header list can never change: frozen, and each of its pairs too. */
export function headersFrozen(headers: ReadonlyArray<readonly [string, string]>): boolean {
  return Object.isFrozen(headers) && headers.every((pair) => Object.isFrozen(pair));
}
