import type Transliterate from '@sindresorhus/transliterate';
import { randomUUID } from 'node:crypto';
import { lazyRequire } from '../../../kernel/index.js';
import type { FieldType } from '../contracts.js';
import { plainDefault } from './helpers.js';

/** Trimmed text; a blank string is no value (an empty form input), as Laravel's ConvertEmptyStringsToNull. */
const text = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
};

export const emailType: FieldType = {
  name: 'email',
  rule: 'email',
  message: 'The :attribute field must be a valid email address.',
  schema: () => ({ type: 'string', format: 'email' }),
  normalize: text,
};

export const urlType: FieldType = {
  name: 'url',
  rule: 'url',
  message: 'The :attribute field must be a valid URL.',
  schema: () => ({ type: 'string', format: 'uri', pattern: '^[A-Za-z][A-Za-z0-9+.-]*://[^\\s]+$' }),
  normalize: text,
};

export const uuidType: FieldType = {
  name: 'uuid',
  rule: 'uuid',
  message: 'The :attribute field must be a valid UUID.',
  schema: () => ({ type: 'string', format: 'uuid' }),
  normalize: text,
  // One spelling is stored so that equality (unique, filters, keys) works.
  cast: (value) => (typeof value === 'string' ? value.toLowerCase() : value),
  castFilter: (value) => (typeof value === 'string' ? value.trim().toLowerCase() : value),
  defaultValue: (field) => (field.config.default === true ? randomUUID() : plainDefault(field.config.default)),
};

function separatorOf(config: Record<string, unknown>): string {
  return typeof config.separator === 'string' ? config.separator : '-';
}

/** Escape for a pattern compiled with the `u` flag (ajv), where `\-` is an error. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Escape inside a character class. */
function escapeClass(text: string): string {
  return text.replace(/[\]\\^-]/g, '\\$&');
}

// The transliteration table builds its patterns when loaded (about 10 ms): with the first slug.
const transliterate = lazyRequire<{ default: typeof Transliterate }>('@sindresorhus/transliterate');

/**
 * Laravel's Str::slug: transliterated to ASCII (`Straße` -> `strasse`, `Привет` -> `privet`,
 * by @sindresorhus/transliterate: a maintained table beats dropping every non-ASCII letter),
 * lower case, runs of anything else become one separator.
 */
export function slugify(value: string, separator: string): string {
  const flip = separator === '-' ? '_' : '-';
  let out = transliterate().default(value).normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  out = out.split(flip).join(separator);
  out = out.replace(/@/g, `${separator}at${separator}`);
  out = out.toLowerCase().replace(/[^a-z0-9\s_-]+/g, '').replace(new RegExp(`[${escapeClass(separator)}\\s_-]+`, 'g'), separator);
  const edge = new RegExp(`^${escapeRegex(separator)}+|${escapeRegex(separator)}+$`, 'g');
  return separator === '' ? out : out.replace(edge, '');
}

export const slugType: FieldType = {
  name: 'slug',
  rule: 'slug',
  message: 'The :attribute field must be a valid slug.',
  configKeys: ['separator'],
  schema(field) {
    const sep = escapeRegex(separatorOf(field.config));
    return { type: 'string', pattern: `^[a-z0-9]+(?:${sep}[a-z0-9]+)*$` };
  },
  // The slug type's job is to make a slug of its input (as upstream's Str::slug on set).
  normalize: (value, field) => (typeof value !== 'string' ? value : value.trim() === '' ? null : slugify(value, separatorOf(field.config))),
  castFilter: (value) => (typeof value === 'number' ? String(value) : value),
  check: (field) =>
    field.config.separator === undefined || (typeof field.config.separator === 'string' && field.config.separator.length <= 3)
      ? []
      : [`Field [${field.handle}]: config.separator must be a string of at most 3 characters.`],
};

export const colorType: FieldType = {
  name: 'color',
  rule: 'color',
  message: 'The :attribute field must be a valid hexadecimal color.',
  schema: () => ({ type: 'string', pattern: '^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$' }),
  normalize: text,
  cast: (value) => (typeof value === 'string' ? value.toLowerCase() : value),
  castFilter: (value) => (typeof value === 'string' ? value.trim().toLowerCase() : value),
};

/** image and file hold a path or URL of the stored file (uploads belong to an addon). */
function fileLike(name: string): FieldType {
  return {
    name,
    rule: name,
    message: `The :attribute field must be ${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} path or URL.`,
    schema: () => ({ type: 'string', minLength: 1 }),
    normalize: text,
  };
}

export const imageType = fileLike('image');
export const fileType = fileLike('file');
