import type { HookName } from '../../kernel/hook-map.js';

/** Every hook point, for addons that log or document them; the `satisfies` keeps it complete. */
const names = {
  'definition.loading': true,
  'definition.extend': true,
  'definition.loaded': true,
  'definition.changed': true,
  'entry.creating': true,
  'entry.created': true,
  'entry.updating': true,
  'entry.updated': true,
  'entry.saving': true,
  'entry.saved': true,
  'entry.deleting': true,
  'entry.deleted': true,
  'request.handled': true,
  'kernel.booted': true,
  'kernel.shutdown': true,
} as const satisfies Record<HookName, true>;

export const HOOK_NAMES = Object.keys(names) as HookName[];
