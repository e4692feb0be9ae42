/**
 * Public surface of the sources plugin: the Source contract every store implements,
 * the registry of source types, and the shared in-memory criteria engine.
 */
export type * from './contracts.js';
export { SOURCES } from './tokens.js';
export { sourcesPlugin as default } from './plugin.js';
