/**
 * Public surface of the streams plugin: stream definitions and their registry (the
 * meta-stream). Other plugins import only from this file.
 */
export type {
  CacheConfig,
  FieldDefinition,
  RouteDefinition,
  SourceConfig,
  StreamConfig,
  StreamDefinition,
} from './types.js';
export { fieldOf, NUMERIC_FIELD_TYPES } from './types.js';
export { canonicalInteger, castKey, existingKey, integerKeyValue, isEntryKey, isNumericKeyText, numericKeyValue, keyFromName, keyKindOf, keyNameOf, keyStrategy, keyTypeOf, MAX_KEY_LENGTH, newUuidKey, typedKey, type EntryKey, type KeyKind, type KeyStrategy } from './keys.js';
export { definitionToJson } from './serialize.js';
export { definitionVersion } from './version.js';
export { titleCase } from './normalize.js';
export { ID_PATTERN, FIELD_HANDLE_PATTERN, TYPE_PATTERN, CLASS_NAME_PATTERN } from './definition-schema.js';
export type {
  CheckContext,
  DefinitionCheck,
  DefinitionGuard,
  DefinitionProblem,
  DefinitionStore,
  DefinitionStoreFactory,
  DefinitionTrouble,
  StoredState,
  StreamDependents,
  StreamRegistry,
  WriteResult,
} from './contracts.js';
export { FOLDER_WATCHER, STREAM_REGISTRY } from './tokens.js';
export { streamsPlugin as default } from './plugin.js';
export { streamsSettings, type StreamsSettings } from './settings.js';
export type * from './hooks.js';
export { nearest as nearestName } from './unknown-keys.js';
