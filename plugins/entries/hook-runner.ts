import type { Hooks, HookName } from '../../kernel/index.js';
import type { EntryHookPayload } from './hooks.js';

type VetoHook = 'entry.creating' | 'entry.updating' | 'entry.saving' | 'entry.deleting';

/**
 * Run a `*ing` hook: a listener that throws vetoes the write (nothing has been written
 * yet). An AppError keeps its status (a ValidationError is a 409 with its elements): that
 * is how a listener refuses on purpose. Any other error is a bug in the listener: it goes
 * on as is, so the client gets a 500 with a request id and the details go to the log only
 * (docs/addons.md, "Errors").
 */
export async function runVetoHook(hooks: Hooks, name: VetoHook, payload: EntryHookPayload): Promise<void> {
  if (!hooks.has(name)) return;
  await hooks.emit(name, payload);
}

/**
 * Run a `*ed` hook: the write is durable already, so a failing listener is logged, not
 * reported, and each listener runs on its own: one that throws never keeps the change
 * from the others (the realtime feed, the webhook outbox, an addon's index).
 */
export async function runAfterHook(
  hooks: Hooks,
  name: Exclude<Extract<HookName, `entry.${string}`>, VetoHook>,
  payload: EntryHookPayload,
  onError: (error: unknown) => void,
): Promise<void> {
  if (!hooks.has(name)) return;
  await hooks.notify(name, payload, onError);
}
