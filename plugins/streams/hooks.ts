import type { HookKinds } from '../../kernel/index.js';

/** The kinds of the hooks the streams plugin emits: the `loading`/`extend`/`loaded` listeners may refuse a definition. */
export const DEFINITION_HOOKS = {
  'definition.loading': 'veto',
  'definition.extend': 'veto',
  'definition.loaded': 'veto',
  'definition.changed': 'after',
} as const satisfies HookKinds;

/** A stream definition as JSON (raw, before or after normalization). */
export type DefinitionJson = Record<string, unknown>;

export interface DefinitionLoadingPayload {
  /** The id when already known (file name or API path), else undefined. */
  id?: string;
  /** The definition file, when loaded from disk. */
  file?: string;
  /** The raw definition: listeners may mutate it before it is validated. */
  definition: DefinitionJson;
}

export interface DefinitionExtendPayload {
  /**
   * Declare a top-level definition key with its JSON Schema. Definitions are then
   * validated against it (a bad value is a definition error naming file and path).
   */
  extend(key: string, schema: Record<string, unknown>): void;
}

export interface DefinitionLoadedPayload {
  id: string;
  /** The normalized definition (fields as a list, routes as a list, extra keys kept). */
  definition: DefinitionJson;
}

export interface DefinitionChangedPayload {
  id: string;
  action: 'created' | 'updated' | 'deleted';
  /** The normalized definition, or null when deleted. */
  definition: DefinitionJson | null;
}

/** The hooks the streams plugin emits, added to the kernel's hook map. */
declare module '../../kernel/hook-map.js' {
  interface HookMap {
    /** A raw definition before validation: listeners may change it (migrate a key). */
    'definition.loading': DefinitionLoadingPayload;
    /** Declare extra top-level definition keys with their JSON Schema. */
    'definition.extend': DefinitionExtendPayload;
    'definition.loaded': DefinitionLoadedPayload;
    'definition.changed': DefinitionChangedPayload;
  }
}
