import type { Hooks } from '../../kernel/index.js';
import type { ExternalChange, Source } from '../sources/index.js';
import type { EntryHookPayload } from './hooks.js';
import { runAfterHook } from './hook-runner.js';
import type { KeyGenerator } from './key-generator.js';

/**
 * Changes the entries layer did not make (a file edited on disk, another node's write to a
 * shared store) reach the `*ed` hooks like API writes do, with `origin` `'disk'` or `'remote'`
 * (realtime feeds and addons hear of them; nothing can be vetoed), and an integer key added
 * by hand moves the key counter past it, so the next create does not collide with it.
 */
export async function takeInChanges(
  hooks: Hooks,
  keys: KeyGenerator,
  stream: string,
  source: Source | undefined,
  changes: ExternalChange[],
  hookFailed: (name: string, error: unknown) => void,
): Promise<void> {
  for (const { key, entry, previous, origin = 'disk' } of changes) {
    if (source !== undefined) keys.stored(source, key);
    if (entry === undefined) {
      await runAfterHook(hooks, 'entry.deleted', { stream, key, entry: { ...previous }, original: previous, origin }, (e) => hookFailed('entry.deleted', e));
      continue;
    }
    const done: EntryHookPayload = { stream, key, entry, original: previous, origin };
    await runAfterHook(hooks, previous ? 'entry.updated' : 'entry.created', done, (e) => hookFailed('created/updated', e));
    await runAfterHook(hooks, 'entry.saved', done, (e) => hookFailed('entry.saved', e));
  }
}
