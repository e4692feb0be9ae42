import type { HookKinds } from '../../kernel/index.js';
import type { EntryAttributes } from '../fields/index.js';

/** The kinds of the hooks the entries plugin emits: `*ing` may veto the write, `*ed` report it. */
export const ENTRY_HOOKS = {
  'entry.creating': 'veto',
  'entry.created': 'after',
  'entry.updating': 'veto',
  'entry.updated': 'after',
  'entry.saving': 'veto',
  'entry.saved': 'after',
  'entry.deleting': 'veto',
  'entry.deleted': 'after',
} as const satisfies HookKinds;

export interface EntryHookPayload {
  /** Stream id. */
  stream: string;
  /** The entry key (undefined on `creating` before a key is assigned). */
  key: unknown;
  /** The attributes being written (mutable in `*ing` hooks) or written (`*ed`). */
  entry: EntryAttributes;
  /** The stored attributes before this write, when the entry existed. */
  original?: EntryAttributes;
  /**
   * Where the change was made, on the `*ed` hooks: `api` (a request), `disk` (a file
   * edited, added or removed outside the server and picked up by live sync), or `remote`
   * (another node sharing a `database` stream's collection, from a MongoDB change stream).
   * Only `entry.created|updated|saved|deleted` fire for the last two: there is nothing to veto.
   */
  origin?: 'api' | 'disk' | 'remote';
}

/** The hooks the entries plugin emits around every write (`*ing` may veto or mutate). */
declare module '../../kernel/hook-map.js' {
  interface HookMap {
    'entry.creating': EntryHookPayload;
    'entry.created': EntryHookPayload;
    'entry.updating': EntryHookPayload;
    'entry.updated': EntryHookPayload;
    'entry.saving': EntryHookPayload;
    'entry.saved': EntryHookPayload;
    'entry.deleting': EntryHookPayload;
    'entry.deleted': EntryHookPayload;
  }
}
