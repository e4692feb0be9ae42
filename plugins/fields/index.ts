/**
 * Public surface of the fields plugin: field types, rules, validation. An addon imports
 * from here, resolves `FIELDS` and calls `registerType` / `registerRule` in its own
 * `register` step, exactly as the core types do.
 */
export type * from './contracts.js';
export { FIELDS } from './tokens.js';
export { TYPE_NAME } from './service.js';
export { danglingRelations } from './related-streams.js';
export { fieldsPlugin as default } from './plugin.js';
