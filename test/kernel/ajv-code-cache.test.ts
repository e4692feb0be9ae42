/**
 * Issue #33 (boot): ajv's generated validator code is kept on disk and run again at the next
 * boot instead of compiling the schema. The cached validator must behave as the compiled one
 * (answers, errors, defaults filled in), a changed schema must never meet a stale file, a
 * damaged file must be replaced, and a schema JSON cannot carry must not be cached at all.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachedValidator } from '../../kernel/ajv-code-cache.js';
import { cacheableAjv } from '../../kernel/ajv.js';

const schema = {
  type: 'object',
  properties: {
    port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    host: { type: 'string', format: 'hostname' },
    mode: { enum: ['a', 'b'], default: 'a' },
  },
  additionalProperties: false,
};

describe('ajv code cache', () => {
  let folder: string;
  let compiles: number;
  const ajv = () => {
    compiles++;
    return cacheableAjv({ useDefaults: true, code: { optimize: false } });
  };

  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'ajv-cache-'));
    compiles = 0;
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('writes the code on the first compile; the next one runs it and answers the same, errors and defaults included', () => {
    const compiled = cachedValidator(schema, 'config', ajv, folder);
    expect(compiles).toBe(1);
    expect(readdirSync(folder)).toHaveLength(1);
    const loaded = cachedValidator(schema, 'config', ajv, folder);
    expect(compiles).toBe(1); // no ajv instance made: the file's code runs
    expect(loaded).not.toBe(compiled);
    for (const input of [{}, { port: 80, host: 'example.org' }, { port: -1 }, { host: 'not a host!' }, { extra: 1 }, { mode: 'c', port: 'x' }]) {
      const a = structuredClone(input) as Record<string, unknown>;
      const b = structuredClone(input) as Record<string, unknown>;
      expect(loaded(b)).toBe(compiled(a));
      expect(loaded.errors ?? null).toEqual(compiled.errors ?? null);
      expect(b).toEqual(a); // defaults filled in alike
    }
    const filled: Record<string, unknown> = {};
    expect(loaded(filled)).toBe(true);
    expect(filled).toEqual({ port: 8080, mode: 'a' });
  });

  it('a changed schema, or other options, is another file: never a stale validator', () => {
    cachedValidator(schema, 'config', ajv, folder);
    const stricter = { ...schema, properties: { ...schema.properties, port: { type: 'integer', minimum: 1024 } } };
    const validate = cachedValidator(stricter, 'config', ajv, folder);
    expect(compiles).toBe(2);
    expect(validate({ port: 80 })).toBe(false);
    cachedValidator(schema, 'definition', ajv, folder);
    expect(compiles).toBe(3);
    expect(readdirSync(folder)).toHaveLength(3);
  });

  it('a damaged file is compiled again and replaced', () => {
    cachedValidator(schema, 'config', ajv, folder);
    const [file] = readdirSync(folder);
    writeFileSync(path.join(folder, file!), 'module.exports = (');
    const validate = cachedValidator(schema, 'config', ajv, folder);
    expect(compiles).toBe(2);
    expect(validate({ port: 1 })).toBe(true);
    cachedValidator(schema, 'config', ajv, folder);
    expect(compiles).toBe(2); // the rewritten file loads
  });

  it('a schema holding what JSON cannot carry is compiled every time, never cached', () => {
    const odd = { type: 'object', properties: { a: { type: 'string' } }, x: /re/ };
    expect(cachedValidator(odd, 'config', ajv, folder)({ a: 1 })).toBe(false);
    cachedValidator(odd, 'config', ajv, folder);
    expect(compiles).toBe(2);
    expect(readdirSync(folder)).toHaveLength(0);
  });

  it('a folder with a byte budget keeps within it: the oldest files go first, the one just written stays', () => {
    const one = (minimum: number) => ({ ...schema, properties: { ...schema.properties, port: { type: 'integer', minimum } } });
    cachedValidator(one(1), 'stream', ajv, folder, Infinity);
    const size = statSync(path.join(folder, readdirSync(folder)[0]!)).size;
    const budget = Math.floor(size * 3.5); // room for three files
    const written: string[] = [];
    for (let minimum = 2; minimum <= 9; minimum++) {
      const before = new Set(readdirSync(folder));
      cachedValidator(one(minimum), 'stream', ajv, folder, budget);
      written.push(readdirSync(folder).find((name) => !before.has(name))!);
      const files = readdirSync(folder);
      expect(files.reduce((total, name) => total + statSync(path.join(folder, name)).size, 0)).toBeLessThanOrEqual(budget);
      expect(files).toContain(written.at(-1)); // the newest is never the one removed
    }
    // Nine files written, room for three: the older ones were removed (which of two written in
    // the same clock tick goes first is the file system's order).
    expect(readdirSync(folder).length).toBeGreaterThanOrEqual(2);
    expect(readdirSync(folder).length).toBeLessThanOrEqual(3);
    const compilesBefore = compiles;
    expect(cachedValidator(one(9), 'stream', ajv, folder, budget)({ port: 8 })).toBe(false);
    expect(compiles).toBe(compilesBefore); // what is kept still loads
  });

  it('an unwritable folder only costs the cache', () => {
    const file = path.join(folder, 'a-file');
    writeFileSync(file, '');
    const validate = cachedValidator(schema, 'config', ajv, path.join(file, 'cache')); // a folder under a file: cannot be made
    expect(validate({ port: 1 })).toBe(true);
    expect(compiles).toBe(1);
  });
});
