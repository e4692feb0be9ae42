import type { HookKinds } from '../../kernel/index.js';

/** `request.handled` reports an answer already written: each listener isolated. */
export const HTTP_HOOKS = { 'request.handled': 'after' } as const satisfies HookKinds;

export interface RequestHookPayload {
  method: string;
  path: string;
  /**
   * The route pattern that served it (`/api/streams/:stream/entries/:id`, `/readyz`), never
   * the raw URL: metrics label by it. '' when no route matched (a 404, a 501).
   */
  route: string;
  status: number;
  durationMs: number;
}

declare module '../../kernel/hook-map.js' {
  interface HookMap {
    /** After a response was written (debug-level observability, metrics addons). */
    'request.handled': RequestHookPayload;
  }
}
