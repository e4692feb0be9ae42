import { AppError } from '../../../kernel/index.js';
import type { FieldType } from '../contracts.js';
import { decryptValue, encryptionKey, encryptionKeyProblem, isEncrypted, encryptValue } from '../encryption.js';
import { hashValue, isHashed } from '../hashing.js';
import { uncastable } from './helpers.js';

export const hashType: FieldType = {
  name: 'hash',
  rule: 'string',
  message: 'The :attribute field must be a string.',
  schema: () => ({ type: 'string', minLength: 1 }),
  // "" is no password (as blank text is no value for non-text types): stored as null, or
  // `required` says so; never "must be a string" for what is a string.
  normalize: (value) => (value === '' ? null : value),
  // One-way: scrypt in a PHC string; a value that already is a hash (a round trip, PHP's bcrypt) is kept.
  cast: (value) => (typeof value !== 'string' || isHashed(value) ? value : hashValue(value)),
  castFilter(value, field) {
    throw uncastable(field, value, 'compared through verifyHash, not filtered (the field is hashed)');
  },
};

export const encryptedType: FieldType = {
  name: 'encrypted',
  rule: 'encrypted',
  message: 'The :attribute field is invalid.',
  // Any JSON value can be encrypted: its JSON text is what is sealed.
  schema: () => ({}),
  cast(value) {
    const key = encryptionKey();
    if (!key) throw new AppError(500, 'The encryption key is not configured.');
    return encryptValue(value, key);
  },
  serialize(value) {
    if (!isEncrypted(value)) return value;
    const key = encryptionKey();
    if (!key) return null;
    try {
      return decryptValue(value, key);
    } catch {
      // A value sealed with another key (or damaged) reads as null rather than failing the whole read.
      return null;
    }
  },
  castFilter(value, field) {
    throw uncastable(field, value, 'left out of filters (the field is encrypted)');
  },
  check(field, stream) {
    const problem = encryptionKeyProblem();
    return problem ? [`Field [${field.handle}] of stream [${stream.id}] is encrypted but ${problem}.`] : [];
  },
};
