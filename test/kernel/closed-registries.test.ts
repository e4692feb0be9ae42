import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, EXTENSIONS, Kernel, RegistrationError, type Plugin } from '../../kernel/index.js';
import { createLogger } from '../../kernel/logger.js';
import { FIELDS, type FieldType } from '../../plugins/fields/index.js';
import { SOURCES } from '../../plugins/sources/index.js';
import { API } from '../../plugins/api/index.js';
import { STREAM_REGISTRY } from '../../plugins/streams/index.js';

/**
 * #30 item 3: every named registry refuses a second registration of a name unless
 * `{ replace: true }`, naming both plugins; the ledger records who owns each name; and
 * registration closes when the kernel starts serving.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'closed-registries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = () => buildConfig({ http: { port: 0 } }, dir);
const silent = createLogger('silent');

const ratingType = (tag: string): FieldType => ({ name: 'rating', kind: 'number', schema: () => ({ type: 'integer' }), description: tag }) as unknown as FieldType;
const addsRating = (name: string, options?: { replace: boolean }): Plugin =>
  definePlugin({ name, requires: ['fields'], register: ({ use }) => use(FIELDS).registerType(ratingType(name), options) });

describe('closed registries', () => {
  it('a field type registered by two plugins is refused, naming both', async () => {
    const kernel = new Kernel(config(), { plugins: [addsRating('stars'), addsRating('hearts')], logger: silent });
    await expect(kernel.boot()).rejects.toThrow(new RegistrationError('the field type "rating" is already registered: plugins "stars" and "hearts" both register it (pass { replace: true } to replace it)'));
  });

  it('a core field type is refused too, naming the fields plugin', async () => {
    const shadow = definePlugin({ name: 'shadow', requires: ['fields'], register: ({ use }) => use(FIELDS).registerType({ ...ratingType('x'), name: 'string' } as FieldType) });
    const kernel = new Kernel(config(), { plugins: [shadow], logger: silent });
    await expect(kernel.boot()).rejects.toThrow('the field type "string" is already registered: plugins "fields" and "shadow" both register it');
  });

  it('{ replace: true } takes a name over, and the ledger records the new owner', async () => {
    const kernel = new Kernel(config(), { plugins: [addsRating('stars'), addsRating('hearts', { replace: true })], logger: silent });
    await kernel.boot();
    try {
      expect((kernel.get(FIELDS).getType('rating') as unknown as { description: string }).description).toBe('hearts');
      expect(kernel.get(EXTENSIONS).owner('field type', 'rating')).toBe('hearts');
      expect(kernel.get(EXTENSIONS).list()).toContainEqual({ registry: 'source type', name: 'filebase', plugin: 'sources' });
    } finally {
      await kernel.shutdown();
    }
  });

  it('source types, rules, definition stores, middleware and endpoints refuse a second name the same way', async () => {
    const cases: Array<[string, Plugin]> = [
      ['the source type "file" is already registered: plugins "sources" and "dup" both register it', definePlugin({ name: 'dup', requires: ['sources'], register: ({ use }) => use(SOURCES).registerType('file', () => { throw new Error('unused'); }) })],
      ['the rule "required" is already registered: plugins "fields" and "dup" both register it', definePlugin({ name: 'dup', requires: ['fields'], register: ({ use }) => use(FIELDS).registerRule({ name: 'required', message: 'x', test: () => true }) })],
      ['the definition store "filebase" is already registered: plugins "streams" and "dup" both register it', definePlugin({ name: 'dup', requires: ['streams'], register: ({ use }) => use(STREAM_REGISTRY).registerStore('filebase', () => { throw new Error('unused'); }) })],
      ['the middleware "auth.bearer" is already registered: plugins "api" and "dup" both register it', definePlugin({ name: 'dup', requires: ['api'], register: ({ use }) => use(API).middleware.register('auth.bearer', () => (_request, next) => next()) })],
    ];
    for (const [message, plugin] of cases) {
      const kernel = new Kernel(config(), { plugins: [plugin], logger: silent });
      await expect(kernel.boot()).rejects.toThrow(message);
    }
  });

  it('a registration from a kernel.booted listener is refused: serving has started; the plugin is named', async () => {
    const late = definePlugin({ name: 'late', requires: ['fields'], register: ({ use, hooks }) => void hooks.on('kernel.booted', () => use(FIELDS).registerType(ratingType('late'))) });
    const kernel = new Kernel(config(), { plugins: [late], logger: silent });
    await expect(kernel.boot()).rejects.toThrow('plugin "late" registers the field type "rating" after the kernel started serving');
  });

  it('a registration once the kernel serves is refused, naming the plugin', async () => {
    let late: (() => void) | undefined;
    const lazy = definePlugin({ name: 'lazy', requires: ['fields'], register: ({ use }) => void (late = () => use(FIELDS).registerType(ratingType('late'))) });
    const kernel = new Kernel(config(), { plugins: [lazy], logger: silent });
    await kernel.boot();
    try {
      expect(() => late!()).toThrow('plugin "unknown" registers the field type "rating" after the kernel started serving');
      expect(kernel.get(FIELDS).getType('rating')).toBeUndefined();
    } finally {
      await kernel.shutdown();
    }
  });
});
