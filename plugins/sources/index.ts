/**
 * Public surface of the sources plugin: the Source contract every store implements,
 * the registry of source types, and the shared in-memory criteria engine.
 */
export type * from './contracts.js';
export { SOURCES } from './tokens.js';
export { NOT_AT_HAND } from './contracts.js';
export { sourcesPlugin as default, createSourceRegistry } from './plugin.js';
export { sourceFingerprint } from './registry.js';
/** The criteria engine as pure functions (the reference semantics for every source). */
export { compileWhere, matchesWhere, type EntryPredicate } from './criteria/match.js';
export { compareEntries, orderSignature, type EntryComparator } from './criteria/order.js';
export { compareKeys, compareValues, getPath, keyId, valuesEqual } from './criteria/values.js';
export { compileLike, likePatternBody, likeToRegExp, likeToRegexSource } from './criteria/like.js';
export { assertFieldName, FIELD_NAME, isOperator, OPERATOR_SPELLINGS, LIST_OPERATORS, listValue, MAX_FILTER_LIST, MAX_FILTER_VALUE, normalizeOperator, normalizeWhere, VALUELESS_OPERATORS } from './criteria/operators.js';
/** Building blocks for addon sources served from memory: a MemorySource given the store that keeps its entries. */
export { MemorySource } from './memory-source.js';
export type { EntryStore, FileLimits, StoreFactory, StoreHost } from './memory/entry-store.js';
export type { UnreadableFiles } from './memory/unreadable-files.js';
export { SingleFileStore } from './single-file-store.js';
export { SourceClosedError } from './source-errors.js';
export { assertFileKey, isFileKey, FILE_KEY, resolveInRoot } from './paths.js';
