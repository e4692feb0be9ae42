/**
 * Public surface of the fields plugin: field types, rules, validation. An addon imports
 * from here, resolves `FIELDS` and calls `registerType` / `registerRule` in its own
 * `register` step, exactly as the core types do.
 */
export type * from './contracts.js';
export { FIELDS } from './tokens.js';
export { FieldsRegistry, TYPE_NAME, type FieldsServiceOptions } from './service.js';
export { INCREMENT, plainDefault } from './defaults.js';
export { defineField, defineFields } from './field-define.js';
export { parseRule, type ParsedRule } from './rule-parser.js';
export { attributeName, errorElement } from './messages.js';
export { formatPhpDate, parsePhpDate, parseDateInput, type ParsedDate } from './php-date.js';
export { zoned, epochOf, isTimeZone, type ZonedTime, type WallTime } from './zoned-time.js';
export { hashValue, verifyHash, isHashed } from './hashing.js';
export { ENCRYPTION_KEY_ENV, encryptValue, decryptValue, encryptionKey } from './encryption.js';
export { isRecord, uncastable } from './types/helpers.js';
export { coreTypes } from './types/core-types.js';
export { coreRules } from './rules/core-rules.js';
export { danglingRelations } from './related-streams.js';
export { fieldsPlugin as default } from './plugin.js';
