/**
 * Every hook point of the product, named and typed in one place so that an addon
 * author gets autocompletion for names and payloads. The kernel only transports
 * these payloads; their shapes are plain objects so the kernel needs no knowledge
 * of streams or HTTP.
 */

/** A stream definition as JSON (raw, before or after normalization). */
export type DefinitionJson = Record<string, unknown>;
/** An entry's attributes as stored. */
export type EntryAttributes = Record<string, unknown>;

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

export interface RequestHookPayload {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

export interface HookMap {
  'definition.loading': DefinitionLoadingPayload;
  'definition.extend': DefinitionExtendPayload;
  'definition.loaded': DefinitionLoadedPayload;
  'definition.changed': DefinitionChangedPayload;
  'entry.creating': EntryHookPayload;
  'entry.created': EntryHookPayload;
  'entry.updating': EntryHookPayload;
  'entry.updated': EntryHookPayload;
  'entry.saving': EntryHookPayload;
  'entry.saved': EntryHookPayload;
  'entry.deleting': EntryHookPayload;
  'entry.deleted': EntryHookPayload;
  /** After a response was written (debug-level observability, metrics addons). */
  'request.handled': RequestHookPayload;
  'kernel.booted': { plugins: string[] };
  'kernel.shutdown': Record<string, never>;
}

export type HookName = keyof HookMap;
