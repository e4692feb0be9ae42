/** Public surface of the entries plugin: the entries of every stream, validated, hooked and durable. */
export type * from './contracts.js';
export { ENTRIES } from './tokens.js';
export { entriesPlugin as default } from './plugin.js';
export { WRITE_METHODS } from './criteria-builder.js';
export type * from './hooks.js';
