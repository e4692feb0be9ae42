import { isIP } from 'node:net';
import type { RuleDefinition } from '../contracts.js';
import { FILLED_MESSAGE } from '../messages.js';
import { formatPhpDate, parseDateInput, parsePhpDate } from '../php-date.js';
import { epochOf, isTimeZone, zoned } from '../zoned-time.js';
import { INTEGER, isNumeric, looseText, noArgs, numberArgs, phpRegex, sizeOf, someArgs } from './rule-helpers.js';

const marker = (name: string): RuleDefinition => ({ name, marker: true, message: '', checkArgs: noArgs });

const isString = (value: unknown): value is string => typeof value === 'string';
const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

function sizeRule(name: string, compare: (size: number, args: number[]) => boolean, messages: RuleDefinition['messages'], argCount: number): RuleDefinition {
  return {
    name,
    message: messages!.string!,
    messages,
    checkArgs: numberArgs(argCount),
    test(value, args, _field, _attributes, kind) {
      // A non-number in a numeric field already fails its type (or `numeric`): one message, not two.
      if (kind === 'numeric' && !Array.isArray(value) && !isNumeric(value)) return true;
      const size = sizeOf(value, kind);
      return size !== undefined && compare(size, args.map(Number));
    },
  };
}

/** Rules that check the kind of a value; JSON Schema says them directly. */
const typeRules: RuleDefinition[] = [
  { name: 'string', message: 'The :attribute field must be a string.', checkArgs: noArgs, schema: () => ({ type: 'string' }) },
  {
    name: 'integer',
    message: 'The :attribute field must be an integer.',
    checkArgs: noArgs,
    schema: () => ({ anyOf: [{ type: 'integer' }, { type: 'string', pattern: INTEGER.source }] }),
  },
  {
    name: 'numeric',
    message: 'The :attribute field must be a number.',
    checkArgs: noArgs,
    test: (value) => isNumeric(value),
  },
  { name: 'boolean', message: 'The :attribute field must be true or false.', checkArgs: noArgs, schema: () => ({ enum: [true, false, 0, 1, '0', '1'] }) },
  { name: 'array', message: 'The :attribute field must be an array.', schema: () => ({ type: ['array', 'object'] }) },
  { name: 'email', message: 'The :attribute field must be a valid email address.', schema: () => ({ type: 'string', format: 'email' }) },
  {
    name: 'url',
    message: 'The :attribute field must be a valid URL.',
    schema: () => ({ type: 'string', format: 'uri', pattern: '^[A-Za-z][A-Za-z0-9+.-]*://[^\\s]+$' }),
  },
  { name: 'uuid', message: 'The :attribute field must be a valid UUID.', checkArgs: noArgs, schema: () => ({ type: 'string', format: 'uuid' }) },
  { name: 'date', message: 'The :attribute field must be a valid date.', checkArgs: noArgs, test: (value) => isString(value) && parseDateInput(value)?.year !== undefined },
  {
    name: 'date_format',
    message: 'The :attribute field must match the format :0.',
    checkArgs: (args) => (args.length === 1 && args[0] !== '' ? undefined : 'needs a format'),
    test: (value, args) => isString(value) && roundTrips(value, args[0]!),
  },
  { name: 'json', message: 'The :attribute field must be a valid JSON string.', checkArgs: noArgs, test: (value) => isString(value) && validJson(value) },
  { name: 'ip', message: 'The :attribute field must be a valid IP address.', checkArgs: noArgs, test: (value) => isString(value) && isIP(value) !== 0 },
  { name: 'ipv4', message: 'The :attribute field must be a valid IPv4 address.', checkArgs: noArgs, test: (value) => isString(value) && isIP(value) === 4 },
  { name: 'ipv6', message: 'The :attribute field must be a valid IPv6 address.', checkArgs: noArgs, test: (value) => isString(value) && isIP(value) === 6 },
  { name: 'timezone', message: 'The :attribute field must be a valid timezone.', test: (value) => isString(value) && isTimeZone(value) },
  {
    name: 'hex_color',
    message: 'The :attribute field must be a valid hexadecimal color.',
    checkArgs: noArgs,
    schema: () => ({ type: 'string', pattern: '^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$' }),
  },
];

/**
 * Laravel's date_format: the value parses with the format AND formatting the parse gives the
 * value back (`2024-2-3` is not `Y-m-d`, `2024-02-30` is no date). A value carrying its own
 * offset, zone or timestamp is pinned to an instant, so only the parse is checked.
 */
function roundTrips(value: string, format: string): boolean {
  const p = parsePhpDate(value, format);
  if (p === undefined) return false;
  if (p.epochMs !== undefined || p.offsetMinutes !== undefined || p.timeZone !== undefined) return true;
  const wall = { year: p.year ?? 1970, month: p.month ?? 1, day: p.day ?? 1, hour: p.hour ?? 0, minute: p.minute ?? 0, second: p.second ?? 0, ms: p.ms ?? 0 };
  return formatPhpDate(zoned(epochOf(wall, 'UTC'), 'UTC'), format) === value;
}

function validJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** min, max, size, between: measured by the field's kind (Laravel's `getSize`). */
const sizeRules: RuleDefinition[] = [
  sizeRule('min', (size, [min]) => size >= min!, {
    numeric: 'The :attribute field must be at least :0.',
    string: 'The :attribute field must be at least :0 characters.',
    array: 'The :attribute field must have at least :0 items.',
  }, 1),
  sizeRule('max', (size, [max]) => size <= max!, {
    numeric: 'The :attribute field must not be greater than :0.',
    string: 'The :attribute field must not be greater than :0 characters.',
    array: 'The :attribute field must not have more than :0 items.',
  }, 1),
  sizeRule('size', (size, [expected]) => size === expected, {
    numeric: 'The :attribute field must be :0.',
    string: 'The :attribute field must be :0 characters.',
    array: 'The :attribute field must contain :0 items.',
  }, 1),
  sizeRule('between', (size, [min, max]) => size >= min! && size <= max!, {
    numeric: 'The :attribute field must be between :0 and :1.',
    string: 'The :attribute field must be between :0 and :1 characters.',
    array: 'The :attribute field must have between :0 and :1 items.',
  }, 2),
  {
    name: 'multiple_of',
    message: 'The :attribute field must be a multiple of :0.',
    checkArgs: numberArgs(1),
    test(value, args) {
      const divisor = Number(args[0]);
      if (!isNumeric(value) || divisor === 0) return false;
      const quotient = Number(value) / divisor;
      return Math.abs(quotient - Math.round(quotient)) < 1e-9;
    },
  },
];

/** Comparisons against constants or another attribute (`gt:10`, `gte:min_price`). */
function compareRule(name: string, word: string, compare: (a: number, b: number) => boolean): RuleDefinition {
  const kinds = { numeric: `The :attribute field must be ${word} :0.`, string: `The :attribute field must be ${word} :0 characters.`, array: `The :attribute field must have ${word.replace('greater than', 'more than').replace('less than', 'fewer than')} :0 items.` };
  return {
    name,
    message: kinds.numeric,
    messages: kinds,
    checkArgs: (args) => (args.length === 1 && args[0] !== '' ? undefined : 'needs one argument (a number or a field)'),
    test(value, args, _field, attributes, kind) {
      const arg = args[0]!;
      const other = Object.hasOwn(attributes, arg) ? sizeOf(attributes[arg], kind) : isNumeric(arg) ? Number(arg) : undefined;
      const size = sizeOf(value, kind);
      return size !== undefined && other !== undefined && compare(size, other);
    },
  };
}

const text = (value: unknown): string => textOf(value) ?? '';

/** Rules on the characters of a value. */
const stringRules: RuleDefinition[] = [
  {
    name: 'in',
    message: 'The selected :attribute is invalid.',
    checkArgs: someArgs,
    test: (value, args) => (Array.isArray(value) ? value : [value]).every((v) => args.includes(looseText(v))),
  },
  {
    name: 'not_in',
    message: 'The selected :attribute is invalid.',
    checkArgs: someArgs,
    test: (value, args) => (Array.isArray(value) ? value : [value]).every((v) => !args.includes(looseText(v))),
  },
  {
    name: 'regex',
    message: 'The :attribute field format is invalid.',
    checkArgs: (args) => (args[0] && phpRegex(args[0]) ? undefined : 'needs a valid RE2 regular expression (linear-time: no backreferences, lookaround or x flag)'),
    test: (value, args) => textOf(value) !== undefined && phpRegex(args[0]!)!.test(text(value)),
  },
  {
    name: 'not_regex',
    message: 'The :attribute field format is invalid.',
    checkArgs: (args) => (args[0] && phpRegex(args[0]) ? undefined : 'needs a valid RE2 regular expression (linear-time: no backreferences, lookaround or x flag)'),
    test: (value, args) => textOf(value) !== undefined && !phpRegex(args[0]!)!.test(text(value)),
  },
  { name: 'alpha', message: 'The :attribute field must only contain letters.', test: (value) => isString(value) && /^[\p{L}\p{M}]+$/u.test(value) },
  {
    name: 'alpha_num',
    message: 'The :attribute field must only contain letters and numbers.',
    test: (value) => textOf(value) !== undefined && /^[\p{L}\p{M}\p{N}]+$/u.test(text(value)),
  },
  {
    name: 'alpha_dash',
    message: 'The :attribute field must only contain letters, numbers, dashes, and underscores.',
    test: (value) => textOf(value) !== undefined && /^[\p{L}\p{M}\p{N}_-]+$/u.test(text(value)),
  },
  { name: 'ascii', message: 'The :attribute field must only contain single-byte alphanumeric characters and symbols.', checkArgs: noArgs, test: (value) => isString(value) && /^[\x20-\x7E]*$/.test(value) },
  { name: 'lowercase', message: 'The :attribute field must be lowercase.', checkArgs: noArgs, test: (value) => isString(value) && value === value.toLowerCase() },
  { name: 'uppercase', message: 'The :attribute field must be uppercase.', checkArgs: noArgs, test: (value) => isString(value) && value === value.toUpperCase() },
  {
    name: 'starts_with',
    message: 'The :attribute field must start with one of the following: :values.',
    checkArgs: someArgs,
    test: (value, args) => textOf(value) !== undefined && args.some((a) => text(value).startsWith(a)),
  },
  {
    name: 'ends_with',
    message: 'The :attribute field must end with one of the following: :values.',
    checkArgs: someArgs,
    test: (value, args) => textOf(value) !== undefined && args.some((a) => text(value).endsWith(a)),
  },
  {
    name: 'doesnt_start_with',
    message: 'The :attribute field must not start with one of the following: :values.',
    checkArgs: someArgs,
    test: (value, args) => textOf(value) !== undefined && !args.some((a) => text(value).startsWith(a)),
  },
  {
    name: 'doesnt_end_with',
    message: 'The :attribute field must not end with one of the following: :values.',
    checkArgs: someArgs,
    test: (value, args) => textOf(value) !== undefined && !args.some((a) => text(value).endsWith(a)),
  },
  {
    name: 'digits',
    message: 'The :attribute field must be :0 digits.',
    checkArgs: numberArgs(1, true),
    test: (value, args) => /^\d+$/.test(text(value)) && text(value).length === Number(args[0]),
  },
  {
    name: 'digits_between',
    message: 'The :attribute field must be between :0 and :1 digits.',
    checkArgs: numberArgs(2, true),
    test: (value, args) => /^\d+$/.test(text(value)) && text(value).length >= Number(args[0]) && text(value).length <= Number(args[1]),
  },
  {
    name: 'distinct',
    message: 'The :attribute field has a duplicate value.',
    test(value, args) {
      if (!Array.isArray(value)) return true;
      const fold = args.includes('ignore_case');
      const seen = new Set<string>();
      for (const item of value) {
        const key = typeof item === 'string' ? (fold ? `s${item.toLowerCase()}` : `s${item}`) : `j${JSON.stringify(item)}`;
        if (seen.has(key)) return false;
        seen.add(key);
      }
      return true;
    },
  },
  { name: 'filled', message: FILLED_MESSAGE, checkArgs: noArgs, test: (value) => !(value === '' || (Array.isArray(value) && value.length === 0)) },
  { name: 'accepted', message: 'The :attribute field must be accepted.', checkArgs: noArgs, test: (value) => ['yes', 'on', '1', 'true'].includes(looseText(value)) },
  { name: 'declined', message: 'The :attribute field must be declined.', checkArgs: noArgs, test: (value) => ['no', 'off', '0', 'false'].includes(looseText(value)) },
  {
    name: 'same',
    message: 'The :attribute field must match :0.',
    checkArgs: (args) => (args.length === 1 && args[0] !== '' ? undefined : 'needs one field'),
    test: (value, args, _field, attributes) => JSON.stringify(attributes[args[0]!]) === JSON.stringify(value),
  },
  {
    name: 'different',
    message: 'The :attribute field and :0 must be different.',
    checkArgs: (args) => (args.length === 1 && args[0] !== '' ? undefined : 'needs one field'),
    test: (value, args, _field, attributes) => JSON.stringify(attributes[args[0]!]) !== JSON.stringify(value),
  },
];

/** Checks that read other entries; they run after the compiled validator, on the cast value. */
const asyncRules: RuleDefinition[] = [
  {
    name: 'unique',
    message: 'The :attribute has already been taken.',
    // Laravel's `unique:table,column` is accepted; scoped to this stream unless a stream is named.
    async verify(value, args, field, context) {
      const stream = args[0] && args[0] !== '' ? args[0] : context.stream.id;
      const column = args[1] && args[1] !== '' ? args[1] : field.handle;
      const except = stream === context.stream.id ? context.key : undefined;
      return !(await context.lookup.exists(stream, column, value, except));
    },
  },
  {
    name: 'exists',
    message: 'The selected :attribute is invalid.',
    checkArgs: (args) => (args.length >= 1 && args.length <= 2 && args[0] !== '' ? undefined : 'needs a stream and optionally a field (exists:stream,field)'),
    async verify(value, args, field, context) {
      const values = Array.isArray(value) ? value : [value];
      for (const item of values) {
        if (!(await context.lookup.exists(args[0]!, args[1] || field.handle, item))) return false;
      }
      return true;
    },
  },
];

/** Every core rule; registered through `FieldsService.registerRule` like addon rules. */
export const coreRules: RuleDefinition[] = [
  marker('required'),
  marker('nullable'),
  marker('sometimes'),
  marker('bail'),
  marker('present'),
  ...typeRules,
  ...sizeRules,
  compareRule('gt', 'greater than', (a, b) => a > b),
  compareRule('gte', 'greater than or equal to', (a, b) => a >= b),
  compareRule('lt', 'less than', (a, b) => a < b),
  compareRule('lte', 'less than or equal to', (a, b) => a <= b),
  ...stringRules,
  ...asyncRules,
];
