/** Public surface of the fields plugin: field types, rules, validation. */
export type * from './contracts.js';
export { FIELDS } from './tokens.js';
export { fieldsPlugin as default } from './plugin.js';
