import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Kernel, serviceRef, type Plugin, type PluginFactory } from '../../kernel/index.js';
import { CORE_PLUGINS, DEFAULT_PLUGINS } from '../../kernel/core-plugins.js';
import { createLogger } from '../../kernel/logger.js';
import { GEO_ADDON_DIR, linkKernelForAddon } from '../helpers/addon-link.js';

/**
 * #30 item 3: a plugin declares the service references it provides and uses; the kernel
 * checks the graph before any register, naming the plugins, so `use` cannot fail later.
 */
const NO_CORE = DEFAULT_PLUGINS.map((name) => ({ name, enabled: false }));
const dir = mkdtempSync(path.join(os.tmpdir(), 'declared-services-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const RATES = serviceRef<{ rate: number }>('rates');
const boot = (plugins: ReturnType<typeof definePlugin>[]) => new Kernel(buildConfig({ plugins: NO_CORE }, dir), { plugins, logger: createLogger('silent') }).boot();

describe('declared provides and uses', () => {
  it('two plugins declaring one service are refused before any register, naming both', async () => {
    const registered: string[] = [];
    const a = definePlugin({ name: 'a', provides: [RATES], register: () => void registered.push('a') });
    const b = definePlugin({ name: 'b', provides: [RATES], register: () => void registered.push('b') });
    await expect(boot([a, b])).rejects.toThrow('plugins "a" and "b" both provide the service "rates"');
    expect(registered).toEqual([]);
  });

  it('a used service whose declared provider is not required is refused before any register', async () => {
    const registered: string[] = [];
    const provider = definePlugin({ name: 'rates', provides: [RATES], register: ({ provide }) => void (registered.push('rates'), provide(RATES, { rate: 1 })) });
    const user = definePlugin({ name: 'shop', uses: [RATES], register: () => void registered.push('shop') });
    await expect(boot([provider, user])).rejects.toThrow('plugin "shop" uses the service "rates" of plugin "rates" without requiring it: add "rates" to its requires');
    expect(registered).toEqual([]);
  });

  it('a used service nobody provides fails the boot before any boot step, naming the plugin', async () => {
    const booted: string[] = [];
    const user = definePlugin({ name: 'shop', uses: [RATES], boot: () => void booted.push('shop') });
    await expect(boot([user])).rejects.toThrow('plugin "shop" uses the service "rates", which no loaded plugin provides');
    expect(booted).toEqual([]);
  });

  it('a provide or use outside the declarations is refused, naming the plugin and the list to fix', async () => {
    const provider = definePlugin({ name: 'rates', provides: [], register: ({ provide }) => provide(RATES, { rate: 1 }) });
    await expect(boot([provider])).rejects.toThrow('plugin "rates" provides the service "rates" without declaring it: add it to its provides');
    const declared = definePlugin({ name: 'rates', provides: [RATES], register: ({ provide }) => provide(RATES, { rate: 1 }) });
    const user = definePlugin({ name: 'shop', requires: ['rates'], uses: [], register: ({ use }) => void use(RATES) });
    await expect(boot([declared, user])).rejects.toThrow('plugin "shop" uses the service "rates" without declaring it: add it to its uses');
  });

  it('a declared graph boots, and use works after boot', async () => {
    const provider = definePlugin({ name: 'rates', provides: [RATES], register: ({ provide }) => provide(RATES, { rate: 2 }) });
    let later: (() => number) | undefined;
    const user = definePlugin({ name: 'shop', requires: ['rates'], uses: [RATES], register: ({ use }) => void (later = () => use(RATES).rate) });
    const kernel = new Kernel(buildConfig({ plugins: NO_CORE }, dir), { plugins: [provider, user], logger: createLogger('silent') });
    await kernel.boot();
    expect(later!()).toBe(2);
    await kernel.shutdown();
  });
});

describe('the first-party plugins', () => {
  // Only when every loaded plugin declares is a used service nobody provides refused before
  // any register: each plugin we ship (and the example addon) declares both lists.
  const modules = { ...Object.fromEntries(Object.entries(CORE_PLUGINS).map(([name, module]) => [name, path.join(import.meta.dirname, '../../kernel', module)])), geo: path.join(GEO_ADDON_DIR, 'index.js') };
  it.each(Object.entries(modules))('%s declares the services it provides and uses', async (name, module) => {
    // The example addon imports `streams-kernel/addon`: linked here too, so this suite passes run alone.
    if (name === 'geo') linkKernelForAddon();
    const exported = ((await import(module)) as { default: Plugin | PluginFactory }).default;
    const plugin = typeof exported === 'function' ? exported() : exported;
    expect(Array.isArray(plugin.provides)).toBe(true);
    // http uses only the kernel's services (no declaration needed); its `uses: []` waits for the
    // transports' branch, which changes plugins/http meanwhile.
    if (name !== 'http') expect(Array.isArray(plugin.uses)).toBe(true);
  });
});
