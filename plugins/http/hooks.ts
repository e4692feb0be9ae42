export interface RequestHookPayload {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

declare module '../../kernel/hook-map.js' {
  interface HookMap {
    /** After a response was written (debug-level observability, metrics addons). */
    'request.handled': RequestHookPayload;
  }
}
