import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Kernel, type Plugin } from '../../kernel/index.js';
import { DEFAULT_PLUGINS } from '../../kernel/core-plugins.js';
import { FIELDS } from '../../plugins/fields/index.js';
import { STREAM_REGISTRY } from '../../plugins/streams/index.js';
import { ENCRYPTION_KEY_ENV } from '../../plugins/fields/encryption.js';
import { MemoryLookup } from './harness.js';

/** Streams and fields only: every other default core plugin is switched off. */
const FIELDS_ONLY = DEFAULT_PLUGINS.filter((name) => name !== 'streams' && name !== 'fields').map((name) => ({ name, enabled: false }));
const roots: string[] = [];

async function boot(definitions: Record<string, unknown>, plugins: Plugin[] = []): Promise<Kernel> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'fields-boot-'));
  roots.push(root);
  await mkdir(path.join(root, 'streams'), { recursive: true });
  for (const [id, body] of Object.entries(definitions)) await writeFile(path.join(root, 'streams', `${id}.json`), JSON.stringify(body));
  const kernel = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: FIELDS_ONLY }, root), { plugins });
  await kernel.boot();
  return kernel;
}

afterEach(async () => {
  delete process.env[ENCRYPTION_KEY_ENV];
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** An addon type, registered through the very same path as the core types. */
const ratingAddon = definePlugin({
  name: 'rating-addon',
  requires: ['fields'],
  register({ use }) {
    use(FIELDS).registerType({
      name: 'rating',
      rule: 'rating',
      message: 'The :attribute field must be a rating from 1 to 5.',
      kind: () => 'numeric',
      schema: () => ({ type: 'integer', minimum: 1, maximum: 5 }),
      normalize: (value) => (typeof value === 'string' && /^\d$/.test(value) ? Number(value) : value),
    });
  },
});

describe('fields plugin in the kernel', () => {
  it('binds FIELDS and checks definitions at boot', async () => {
    const kernel = await boot({ books: { fields: { id: 'integer', title: { type: 'string', required: true } } } });
    const fields = kernel.get(FIELDS);
    const books = kernel.get(STREAM_REGISTRY).require('books');
    expect(await fields.prepare(books, { title: 'Dune' }, { mode: 'create', lookup: new MemoryLookup() })).toEqual({ title: 'Dune' });
    await kernel.shutdown();
  });

  it('makes an unknown type a startup error naming stream, field and type', async () => {
    await expect(boot({ books: { fields: { title: 'foo' } } })).rejects.toThrow(
      'Field [title] of stream [books] has unknown type [foo]; no plugin registers it.',
    );
  });

  it('makes an unknown rule and bad rule arguments startup errors', async () => {
    await expect(boot({ books: { fields: { title: { type: 'string', rules: 'required|shiny' } } } })).rejects.toThrow(
      'Field [title] of stream [books] has unknown rule [shiny].',
    );
    await expect(boot({ books: { fields: { title: { type: 'string', rules: ['max:lots'] } } } })).rejects.toThrow(/rule \[max:lots\] needs one numeric argument/);
    await expect(boot({ books: { fields: { title: 'string' }, rules: { title: 'bogus' } } })).rejects.toThrow(/unknown rule \[bogus\]/);
  });

  it('accepts a type registered by an addon and validates with it', async () => {
    const kernel = await boot({ reviews: { fields: { stars: { type: 'rating', rules: 'min:2' } } } }, [ratingAddon]);
    const fields = kernel.get(FIELDS);
    const reviews = kernel.get(STREAM_REGISTRY).require('reviews');
    const lookup = new MemoryLookup();
    expect(await fields.prepare(reviews, { stars: '4' }, { mode: 'create', lookup })).toEqual({ stars: 4 });
    await expect(fields.prepare(reviews, { stars: 9 }, { mode: 'create', lookup })).rejects.toMatchObject({
      status: 409,
      errors: [{ message: 'The stars field must be a rating from 1 to 5.', meta: { field: 'stars', rule: 'rating' } }],
    });
    await expect(fields.prepare(reviews, { stars: 1 }, { mode: 'create', lookup })).rejects.toMatchObject({
      errors: [{ message: 'The stars field must be at least 2.', meta: { field: 'stars', rule: 'min' } }],
    });
    await kernel.shutdown();
  });

  it('refuses to start with an encrypted field and no key, and starts with one', async () => {
    await expect(boot({ vault: { fields: { secret: 'encrypted' } } })).rejects.toThrow(/Field \[secret\] of stream \[vault\] is encrypted but no encryption key is configured/);
    process.env[ENCRYPTION_KEY_ENV] = Buffer.alloc(32, 7).toString('base64');
    const kernel = await boot({ vault: { fields: { secret: 'encrypted' } } });
    await kernel.shutdown();
  });
});
