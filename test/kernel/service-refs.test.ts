import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Kernel, serviceRef, type Plugin, type PluginFactory } from '../../kernel/index.js';
import { DEFAULT_PLUGINS } from '../../kernel/core-plugins.js';
import { ENTRIES } from '../../plugins/entries/index.js';
import { startApp } from '../helpers/app.js';

/**
 * #17 item 1: typed service references. A plugin provides a service under a reference and
 * others `use` it, typed by the compiler (the @ts-expect-error lines below are checked by
 * `npm run typecheck`); a missing provider, two providers, or a use without `requires`
 * fails the boot naming the plugins; a plugin factory gives each kernel its own state.
 */
interface Counter {
  next(): number;
}
const COUNTER = serviceRef<Counter>('test-counter');
const NO_CORE = DEFAULT_PLUGINS.map((name) => ({ name, enabled: false }));
const dir = mkdtempSync(path.join(os.tmpdir(), 'service-refs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A counter plugin whose count lives in its factory's closure: one per kernel. */
const counterPlugin: PluginFactory = definePlugin(() => {
  let count = 0;
  return {
    name: 'counter',
    register({ provide }) {
      provide(COUNTER, { next: () => ++count });
    },
  };
});

function boot(plugins: Array<Plugin | PluginFactory>): Promise<Kernel> {
  const kernel = new Kernel(buildConfig({ plugins: NO_CORE, log: { level: 'silent' } }, dir), { plugins });
  return kernel.boot().then(() => kernel);
}

describe('typed service references', () => {
  it('use gives the provided service with its type; the compiler refuses a wrong one', async () => {
    let seen: number | undefined;
    const user = definePlugin({
      name: 'user',
      requires: ['counter'],
      boot({ use }) {
        const counter = use(COUNTER);
        seen = counter.next();
        // @ts-expect-error the service is a Counter, not a string
        const wrong: string = use(COUNTER);
        void wrong;
      },
    });
    const kernel = await boot([counterPlugin, user]);
    expect(seen).toBe(1);
    expect(kernel.get(COUNTER).next()).toBe(2);
    await kernel.shutdown();
    // @ts-expect-error a provider must give the referenced type
    definePlugin({ name: 'liar', register: ({ provide }) => provide(COUNTER, { next: () => 'one' }) });
  });

  it('a plugin factory gives every kernel its own state', async () => {
    const a = await boot([counterPlugin]);
    const b = await boot([counterPlugin]);
    expect([a.get(COUNTER).next(), a.get(COUNTER).next(), b.get(COUNTER).next()]).toEqual([1, 2, 1]);
    await Promise.all([a.shutdown(), b.shutdown()]);
  });

  it('a service no loaded plugin provides fails the boot naming the plugin and the service', async () => {
    const user = definePlugin({ name: 'needy', boot: ({ use }) => void use(COUNTER) });
    await expect(boot([user])).rejects.toThrow('plugin "needy" uses the service "test-counter", which no loaded plugin provides');
  });

  it('using a service of a plugin not required fails naming both (requires is what orders their lifecycles)', async () => {
    const user = definePlugin({ name: 'sloppy', boot: ({ use }) => void use(COUNTER) });
    await expect(boot([counterPlugin, user])).rejects.toThrow('plugin "sloppy" uses the service "test-counter" of plugin "counter" without requiring it: add "counter" to its requires');
  });

  it('two plugins providing one reference fail the boot naming both', async () => {
    const second = definePlugin({ name: 'second-counter', register: ({ provide }) => provide(COUNTER, { next: () => 0 }) });
    await expect(boot([counterPlugin, second])).rejects.toThrow('plugins "counter" and "second-counter" both provide the service "test-counter"');
  });

  it('a reference is the registered symbol it always was: container.resolve(TOKEN) still finds the service', async () => {
    const app = await startApp({ streams: { notes: { fields: { id: 'integer' } } } });
    try {
      expect(app.kernel.container.resolve(ENTRIES)).toBe(app.kernel.get(ENTRIES));
      expect(Symbol.keyFor(ENTRIES)).toBe('streams-kernel:entries');
    } finally {
      await app.close();
    }
  });
});
