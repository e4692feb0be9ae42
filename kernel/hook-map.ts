/**
 * The hook points and their payloads, by name. The kernel itself emits only its lifecycle
 * hooks; every plugin adds the hooks it emits by augmenting this interface next to its own
 * payload types (plugins/streams/hooks.ts, plugins/entries/hooks.ts, plugins/http/hooks.ts),
 * as Vite plugins augment Rollup's types, and an addon does the same for hooks of its own:
 *
 *     declare module 'streams-kernel/addon' {
 *       interface HookMap { 'rates.updated': { currency: string } }
 *     }
 *
 * The kernel only transports payloads, so it knows nothing of streams or HTTP.
 */
export interface HookMap {
  'kernel.booted': { plugins: string[] };
  'kernel.shutdown': Record<string, never>;
}

export type HookName = keyof HookMap;
