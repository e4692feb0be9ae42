import { describe, expect, it } from 'vitest';
import { castKey, keyFromName, keyKindOf, keyNameOf, keyStrategy, typedKey } from '../../plugins/streams/index.js';
import { field, makeDefinition } from '../sources/definitions.js';

/**
 * #17 item 4: entry keys have one owner (plugins/streams/keys.ts). The URL, a file name and
 * MongoDB's `_id` read the same text as the same key, by the key field's type.
 */
const streamWith = (type: string | undefined, keyName = 'id') =>
  makeDefinition('things', { keyName, fields: type === undefined ? [field('title')] : [field(keyName, type), field('title')] });

describe('entry keys, one owner', () => {
  it.each([
    [undefined, '4', 4, 'auto'],
    [undefined, '04', '04', 'auto'],
    // The digit fast path (canonical integers of up to ten digits) and the regular expressions agree.
    [undefined, '0', 0, 'auto'],
    [undefined, '9999999999', 9999999999, 'auto'],
    [undefined, '99999999999', 99999999999, 'auto'],
    [undefined, '-4', -4, 'auto'],
    [undefined, '4a', '4a', 'auto'],
    ['integer', '0', 0, 'number'],
    ['integer', '1234567890', 1234567890, 'number'],
    ['integer', '-0012', -12, 'number'],
    ['string', '12', '12', 'string'],
    ['integer', '04', 4, 'number'],
    ['decimal', '2.5', 2.5, 'number'],
    ['string', '4', '4', 'string'],
    ['uuid', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'string'],
  ] as const)('key field %s: "%s" is %j everywhere', (type, text, key, kind) => {
    const definition = streamWith(type);
    expect(castKey(definition, text)).toEqual(key);
    expect(keyKindOf(definition)).toBe(kind);
    // A file named after the key reads back as the same key (a uuid file name is already lower case).
    expect(keyFromName(String(key), definition)).toEqual(key);
    expect(typedKey(key, keyKindOf(definition))).toEqual(key);
  });

  it('the key name comes from the definition (normalized to "id"), and generation follows the key type', () => {
    expect(keyNameOf(streamWith('integer', 'slug'))).toBe('slug');
    expect(keyStrategy(streamWith('integer'))).toBe('increment');
    expect(keyStrategy(streamWith(undefined))).toBe('increment');
    expect(keyStrategy(streamWith('uuid'))).toBe('uuid');
    expect(keyStrategy(streamWith('string'))).toBe('uuid');
  });
});
