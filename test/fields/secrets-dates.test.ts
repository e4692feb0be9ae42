import { keyStrategy } from '../../plugins/streams/keys.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decryptValue, ENCRYPTION_KEY_ENV, encryptionKey } from '../../plugins/fields/encryption.js';
import { formatPhpDate, parsePhpDate } from '../../plugins/fields/php-date.js';
import { zoned } from '../../plugins/fields/zoned-time.js';
import { makeService, MemoryLookup, stream } from './harness.js';

describe('encrypted', () => {
  const hexKey = 'a'.repeat(64);
  beforeEach(() => {
    process.env[ENCRYPTION_KEY_ENV] = hexKey;
  });
  afterEach(() => {
    delete process.env[ENCRYPTION_KEY_ENV];
  });

  it('stores AES-256-GCM as a versioned string and serializes the decrypted value', async () => {
    const definition = stream('vault', { secret: 'encrypted', card: 'encrypted' });
    const service = makeService([definition]);
    expect(service.check(definition)).toEqual([]);
    const out = await service.prepare(definition, { secret: 'the answer', card: { n: 42 } }, { mode: 'create', lookup: new MemoryLookup() });
    expect(out.secret).toMatch(/^enc:v1:[\w-]+:[\w-]+:[\w-]+$/);
    expect(JSON.stringify(out)).not.toContain('the answer');
    const other = await service.prepare(definition, { secret: 'the answer' }, { mode: 'create', lookup: new MemoryLookup() });
    expect(other.secret).not.toBe(out.secret);
    const reread = JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
    expect(service.serialize(definition, reread)).toEqual({ secret: 'the answer', card: { n: 42 } });
    expect(decryptValue(out.secret as string, encryptionKey()!)).toBe('the answer');
  });

  it('accepts a base64 key and reads a value sealed with another key as null', async () => {
    const definition = stream('vault', { secret: 'encrypted' });
    const service = makeService([definition]);
    const out = await service.prepare(definition, { secret: 's' }, { mode: 'create', lookup: new MemoryLookup() });
    process.env[ENCRYPTION_KEY_ENV] = Buffer.alloc(32, 1).toString('base64');
    expect(encryptionKey()).toHaveLength(32);
    expect(service.serialize(definition, out)).toEqual({ secret: null });
  });

  it('reports a key of the wrong length at load', () => {
    process.env[ENCRYPTION_KEY_ENV] = 'short';
    const definition = stream('vault', { secret: 'encrypted' });
    expect(makeService([definition]).check(definition)).toEqual([
      { path: '/fields/0/config', message: `Field [secret] of stream [vault] is encrypted but ${ENCRYPTION_KEY_ENV} is not 32 bytes of base64 or hex.` },
    ]);
  });
});

describe('PHP date formats', () => {
  const t = zoned(Date.UTC(2024, 1, 29, 15, 4, 5, 123), 'UTC');

  it.each([
    ['Y-m-d H:i:s', '2024-02-29 15:04:05'],
    ['D, d M Y', 'Thu, 29 Feb 2024'],
    ['l jS \\o\\f F Y h:i:s A', 'Thursday 29th of February 2024 03:04:05 PM'],
    ['N w z t L', '4 4 59 29 1'],
    ['W o y n G g a', '09 2024 24 2 15 3 pm'],
    ['c', '2024-02-29T15:04:05+00:00'],
    ['r', 'Thu, 29 Feb 2024 15:04:05 +0000'],
    ['U', String(Math.floor(Date.UTC(2024, 1, 29, 15, 4, 5) / 1000))],
    ['u v e T P O Z p', '123000 123 UTC UTC +00:00 +0000 0 Z'],
  ])('formats %s', (format, expected) => {
    expect(formatPhpDate(t, format)).toBe(expected);
  });

  it('formats in a zone with its offset and DST flag', () => {
    const paris = zoned(Date.UTC(2024, 6, 1, 10, 0, 0), 'Europe/Paris');
    expect(formatPhpDate(paris, 'Y-m-d H:i:s P I e')).toBe('2024-07-01 12:00:00 +02:00 1 Europe/Paris');
    const winter = zoned(Date.UTC(2024, 0, 1, 10, 0, 0), 'Europe/Paris');
    expect(formatPhpDate(winter, 'H:i O I')).toBe('11:00 +0100 0');
  });

  it('parses what it formats, and rejects what does not match', () => {
    expect(parsePhpDate('29/02/2024 3:04 pm', 'd/m/Y g:i a')).toMatchObject({ year: 2024, month: 2, day: 29, hour: 15, minute: 4 });
    expect(parsePhpDate('29 February 2024', 'd F Y')).toMatchObject({ year: 2024, month: 2, day: 29 });
    expect(parsePhpDate('2024-02-29T10:00:00+05:30', 'Y-m-d\\TH:i:sP')).toMatchObject({ offsetMinutes: 330 });
    expect(parsePhpDate('2023-02-29', 'Y-m-d')).toBeUndefined();
    expect(parsePhpDate('2024-02-29 extra', 'Y-m-d')).toBeUndefined();
  });

  it('stores a datetime in the application timezone when the field names none', async () => {
    const definition = stream('events', { at: { type: 'datetime', config: { format: 'Y-m-d H:i:s T' } } });
    const service = makeService([definition], 'America/New_York');
    const out = await service.prepare(definition, { at: '2024-01-15T17:00:00Z' }, { mode: 'create', lookup: new MemoryLookup() });
    expect(out.at).toBe('2024-01-15 12:00:00 EST');
    // What the PHP system wrote in that format reads back and re-stores unchanged.
    const again = await service.prepare(definition, { at: out.at }, { mode: 'create', lookup: new MemoryLookup() });
    expect(again.at).toBe('2024-01-15 12:00:00 EST');
  });
});

describe('input safety', () => {
  const definition = stream('books', { title: 'string', meta: 'object' });
  const service = makeService([definition]);
  const lookup = new MemoryLookup();

  it('refuses prototype keys at the top level and nested, and names that are not attributes', async () => {
    const evil = JSON.parse('{"__proto__": {"admin": true}, "title": "x"}') as Record<string, unknown>;
    await expect(service.prepare(definition, evil, { mode: 'create', lookup })).rejects.toMatchObject({ status: 400 });
    const nested = JSON.parse('{"meta": {"a": {"constructor": {"prototype": {}}}}}') as Record<string, unknown>;
    await expect(service.prepare(definition, nested, { mode: 'create', lookup })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('[meta]') });
    await expect(service.prepare(definition, { $where: 'x' }, { mode: 'create', lookup })).rejects.toMatchObject({ status: 400 });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('never mutates the input and keeps undeclared attributes', async () => {
    const input = { title: 5, extra: { a: 1 } };
    const copy = structuredClone(input);
    const out = await service.prepare(definition, input, { mode: 'create', lookup });
    expect(input).toEqual(copy);
    expect(out).toEqual({ title: '5', extra: { a: 1 } });
  });

  it('reports reserved field handles at load', () => {
    const bad = stream('bad', { constructor: 'string' });
    expect(service.check(bad)).toEqual([{ path: '/fields/0/handle', message: 'Field handle [constructor] of stream [bad] is reserved.' }]);
  });
});

describe('keys and increments', () => {
  it('follows decisions.md for the key strategy and fills a uuid key on create', async () => {
    const lookup = new MemoryLookup({ counters: [{ id: 1, n: 7 }] });
    const cases: Array<[Record<string, unknown>, 'increment' | 'uuid']> = [
      [{ id: 'integer' }, 'increment'],
      [{ title: 'string' }, 'increment'],
      [{ id: 'string' }, 'uuid'],
      [{ id: { type: 'uuid', config: { default: true } } }, 'uuid'],
      [{ id: { type: 'string', config: { default: 'increment' } } }, 'increment'],
    ];
    for (const [fields, strategy] of cases) {
      const definition = stream('things', fields as Record<string, string>);
      const service = makeService([definition]);
      expect(keyStrategy(definition)).toBe(strategy);
      const out = await service.prepare(definition, {}, { mode: 'create', lookup });
      if (strategy === 'uuid') expect(out.id).toMatch(/^[0-9a-f-]{36}$/);
      else expect(out.id).toBeUndefined();
    }
    const counters = stream('counters', { id: { type: 'integer', config: { default: 'increment' } }, n: { type: 'integer', config: { default: 'increment' } } });
    const out = await makeService([counters]).prepare(counters, {}, { mode: 'create', lookup });
    expect(out).toEqual({ n: 8 });
  });
});
