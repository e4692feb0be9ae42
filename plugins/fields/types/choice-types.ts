import type { FieldDefinition } from '../../streams/index.js';
import type { FieldType } from '../contracts.js';
import { isRecord, plainDefault, uncastable } from './helpers.js';

const cache = new WeakMap<FieldDefinition, unknown[]>();

/** The values of `config.options`: the keys of a value -> label object, or the list itself. */
export function optionValues(field: FieldDefinition): unknown[] {
  let values = cache.get(field);
  if (!values) {
    const options = field.config.options;
    if (Array.isArray(options)) {
      // A list may hold plain values or {value, label} objects.
      values = options.map((o) => (isRecord(o) && 'value' in o ? o.value : o));
    } else if (isRecord(options)) {
      values = Object.keys(options);
    } else {
      values = [];
    }
    cache.set(field, values);
  }
  return values;
}

/** `1` for an option `"1"` and `"1"` for an option `1`: form posts and object keys are text. */
function option(value: unknown, field: FieldDefinition): unknown {
  const values = optionValues(field);
  if (values.includes(value)) return value;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    const found = values.find((v) => String(v) === String(value));
    if (found !== undefined) return found;
  }
  return value;
}

function checkOptions(field: FieldDefinition): string[] {
  const options = field.config.options;
  const ok = (Array.isArray(options) && options.length > 0) || (isRecord(options) && Object.keys(options).length > 0);
  return ok ? [] : [`Field [${field.handle}] of type [${field.type}] needs config.options (an object of value to label, or a list of values).`];
}

function single(name: string): FieldType {
  return {
    name,
    rule: 'in',
    message: 'The selected :attribute is invalid.',
    configKeys: ['options'],
    schema: (field) => ({ enum: optionValues(field) }),
    normalize: (value, field) => (value === '' ? null : option(value, field)),
    defaultValue: (field) => plainDefault(field.config.default),
    castFilter(value, field) {
      const found = option(value, field);
      if (!optionValues(field).includes(found)) throw uncastable(field, value, `one of ${optionValues(field).map(String).join(', ')}`);
      return found;
    },
    check: checkOptions,
  };
}

export const selectType = single('select');
export const enumType = single('enum');

export const multiselectType: FieldType = {
  name: 'multiselect',
  rule: 'in',
  message: 'The selected :attribute is invalid.',
  configKeys: ['options'],
  kind: () => 'array',
  schema: (field) => ({
    type: 'array',
    items: { enum: optionValues(field), 'x-rule': 'in', 'x-message': 'The selected :attribute is invalid.' },
  }),
  normalize: (value, field) => (Array.isArray(value) ? value.map((v) => option(v, field)) : value),
  // A filter on a multiselect names one option (CONTAINS) or a list of them.
  castFilter(value, field) {
    const found = option(value, field);
    if (!optionValues(field).includes(found)) throw uncastable(field, value, `one of ${optionValues(field).map(String).join(', ')}`);
    return found;
  },
  check: checkOptions,
};
