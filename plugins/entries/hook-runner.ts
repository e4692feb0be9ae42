import { AppError, type Hooks, type HookName } from '../../kernel/index.js';
import type { EntryHookPayload } from '../../kernel/index.js';

type VetoHook = 'entry.creating' | 'entry.updating' | 'entry.saving' | 'entry.deleting';

/**
 * Run a `*ing` hook: a listener that throws vetoes the write. An AppError keeps its
 * status; any other error becomes a 409 with its message. Nothing has been written yet.
 */
export async function runVetoHook(hooks: Hooks, name: VetoHook, payload: EntryHookPayload): Promise<void> {
  if (!hooks.has(name)) return;
  try {
    await hooks.emit(name, payload);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError(409, error instanceof Error && error.message ? error.message : `The write was refused by an ${name} listener.`);
  }
}

/** Run a `*ed` hook: the write is durable already, so a failing listener is logged, not reported. */
export async function runAfterHook(
  hooks: Hooks,
  name: Exclude<Extract<HookName, `entry.${string}`>, VetoHook>,
  payload: EntryHookPayload,
  onError: (error: unknown) => void,
): Promise<void> {
  if (!hooks.has(name)) return;
  try {
    await hooks.emit(name, payload);
  } catch (error) {
    onError(error);
  }
}
