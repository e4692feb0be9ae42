import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { injectable } from 'tsyringe';
import { applyConfigSections, buildConfig, ConfigError, definePlugin, ExtensionLedger, Hooks, Kernel, loadConfigFile, type Plugin } from '../../kernel/index.js';
import { CORE_SETTINGS, completeConfig } from '../helpers/config.js';
import { orderPlugins } from '../../kernel/plugin-loader.js';
import { DEFAULT_PLUGINS } from '../../kernel/core-plugins.js';

const NO_CORE = DEFAULT_PLUGINS.map((name) => ({ name, enabled: false }));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kernel-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('config', () => {
  it('applies defaults and resolves paths against the config file folder', async () => {
    const file = path.join(dir, 'app.json');
    await writeFile(file, JSON.stringify({ streams: { path: 'defs' } }));
    const config = loadConfigFile(file, { port: 0 });
    expect(config.root).toBe(dir);
    applyConfigSections(config, CORE_SETTINGS.map((section) => ({ plugin: section.key, section })));
    expect(config.streams.path).toBe(path.join(dir, 'defs'));
    expect(config.streams.data_path).toBe(path.join(dir, 'streams', 'data'));
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 0, max_body: 1048576, trust_proxy: false });
    expect(config.api).toMatchObject({ enabled: true, prefix: 'api', gate_status: 404, gate_message: null, per_page: 100, max_per_page: 1000 });
    expect(config.streams.streams_id).toBe('core.streams');
  });

  it('honours an explicit root', () => {
    const config = completeConfig({ root: 'sub' }, dir);
    expect(config.root).toBe(path.join(dir, 'sub'));
    expect(config.streams.path).toBe(path.join(dir, 'sub', 'streams'));
  });

  it('rejects unknown keys and bad values with the file and JSON path', async () => {
    const file = path.join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ http: { port: 'eighty' } }));
    const sections = CORE_SETTINGS.map((section) => ({ plugin: section.key, section }));
    expect(() => applyConfigSections(loadConfigFile(file), sections)).toThrow(`${file} at /http/port: must be integer`);
    expect(() => completeConfig({ api: { gate_staus: 403 } }, dir)).toThrow('at /api/gate_staus: is not a known key');
    expect(() => buildConfig({ log: { level: 'loud' } }, dir)).toThrow(/at \/log\/level: must be one of/);
  });

  it('plugins own their sections: the kernel validates each loaded plugin\'s and refuses a key no loaded plugin claims', async () => {
    const file = path.join(dir, 'sections.json');
    // Without the core plugins nobody owns "http" or "streams".
    await writeFile(file, JSON.stringify({ plugins: NO_CORE, http: { port: 0 } }));
    await expect(new Kernel(loadConfigFile(file)).boot()).rejects.toThrow(`${file} at /http: is not a known key: no loaded plugin owns a "http" section`);
    // An addon owns a section exactly as a core plugin does: defaults filled, errors named by path.
    let seen: unknown;
    const addon = definePlugin({
      name: 'greeter',
      settings: { key: 'greeter', schema: { type: 'object', additionalProperties: false, properties: { word: { type: 'string', default: 'hello' } } } },
      register: ({ config }) => void (seen = (config as unknown as Record<string, unknown>).greeter),
    });
    const ok = new Kernel(buildConfig({ plugins: NO_CORE, log: { level: 'silent' } }, dir), { plugins: [addon] });
    await ok.boot();
    expect(seen).toEqual({ word: 'hello' });
    await ok.shutdown();
    const bad = new Kernel(buildConfig({ plugins: NO_CORE, log: { level: 'silent' }, greeter: { word: 5 } }, dir), { plugins: [addon] });
    await expect(bad.boot()).rejects.toThrow('config at /greeter/word: must be string');
    const twice = new Kernel(buildConfig({ plugins: NO_CORE, log: { level: 'silent' } }, dir), { plugins: [addon, { ...addon, name: 'greeter-2' }] });
    await expect(twice.boot()).rejects.toThrow('plugins "greeter" and "greeter-2" both claim the settings section "greeter"');
  });

  it('keeps any keys under a plugin\'s options', () => {
    const config = buildConfig({ plugins: [{ name: './x', options: { anything: { goes: true } } }] }, dir);
    expect(config.plugins[0]).toMatchObject({ options: { anything: { goes: true } } });
  });

  it('reports unreadable and non-JSON files', async () => {
    expect(() => loadConfigFile(path.join(dir, 'missing.json'))).toThrow(/cannot read config file \(ENOENT\)/);
    const file = path.join(dir, 'text.json');
    await writeFile(file, 'not json');
    expect(() => loadConfigFile(file)).toThrow(/is not valid JSON/);
  });
});

describe('plugin ordering', () => {
  const p = (name: string, requires: string[] = []): { plugin: Plugin; options: Record<string, unknown>; source: string } => ({
    plugin: { name, requires },
    options: {},
    source: name,
  });

  it('puts each plugin after what it requires and keeps the listed order otherwise', () => {
    const ordered = orderPlugins([p('api', ['http', 'streams']), p('http'), p('streams'), p('extra')]);
    expect(ordered.map((x) => x.plugin.name)).toEqual(['http', 'streams', 'api', 'extra']);
  });

  it('names a missing requirement and a cycle', () => {
    expect(() => orderPlugins([p('a', ['ghost'])])).toThrow('plugin "a" requires "ghost", which is not loaded');
    expect(() => orderPlugins([p('a', ['b']), p('b', ['c']), p('c', ['a'])])).toThrow('plugin requirements form a cycle: a -> b -> c -> a');
  });
});

describe('kernel lifecycle', () => {
  it('runs register for all, then boot in order, and shutdown in reverse', async () => {
    const calls: string[] = [];
    const make = (name: string, requires: string[] = []): Plugin =>
      definePlugin({
        name,
        requires,
        register: () => void calls.push(`register:${name}`),
        boot: () => void calls.push(`boot:${name}`),
        shutdown: () => void calls.push(`shutdown:${name}`),
      });
    const kernel = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: NO_CORE }, dir), {
      plugins: [make('b', ['a']), make('a')],
    });
    await kernel.boot();
    await kernel.shutdown();
    expect(calls).toEqual(['register:a', 'register:b', 'boot:a', 'boot:b', 'shutdown:b', 'shutdown:a']);
  });

  it('lists the registrations for its debug line only when debug is logged (the list sorts by locale: ICU, ~8 ms of a boot)', async () => {
    const listed = vi.spyOn(ExtensionLedger.prototype, 'list');
    try {
      for (const level of ['info', 'debug'] as const) {
        listed.mockClear();
        const kernel = new Kernel(buildConfig({ log: { level }, plugins: NO_CORE }, dir), { logger: pino({ level }, { write: () => undefined }) });
        await kernel.boot();
        await kernel.shutdown();
        expect(listed, level).toHaveBeenCalledTimes(level === 'debug' ? 1 : 0);
      }
    } finally {
      listed.mockRestore();
    }
  });

  it('shuts down what booted when a later plugin fails to boot', async () => {
    const calls: string[] = [];
    const kernel = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: NO_CORE }, dir), {
      plugins: [
        definePlugin({ name: 'ok', shutdown: () => void calls.push('shutdown:ok') }),
        definePlugin({
          name: 'broken',
          requires: ['ok'],
          boot: () => {
            throw new Error('no disk');
          },
        }),
      ],
    });
    await expect(kernel.boot()).rejects.toThrow('no disk');
    expect(calls).toEqual(['shutdown:ok']);
  });

  it('validates plugin options against the plugin\'s schema, with defaults', async () => {
    let seen: unknown;
    const plugin = definePlugin<{ size: number }>({
      name: 'opts',
      optionsSchema: { type: 'object', properties: { size: { type: 'integer', default: 3 } }, additionalProperties: false },
      register: ({ options }) => void (seen = options),
    });
    const kernel = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: NO_CORE }, dir), { plugins: [plugin as Plugin] });
    await kernel.boot();
    await kernel.shutdown();
    expect(seen).toEqual({ size: 3 });

    const bad = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: [...NO_CORE, { name: './opts.mjs', options: { size: 'big' } }] }, dir));
    await writeFile(
      path.join(dir, 'opts.mjs'),
      `export default { name: 'opts-file', optionsSchema: { type: 'object', properties: { size: { type: 'integer' } } } };`,
    );
    await expect(bad.boot()).rejects.toThrow(/options of plugin "opts-file" \/size must be integer/);
  });

  it('loads an addon by path and by package name from the app root, and explains what is missing', async () => {
    await writeFile(path.join(dir, 'addon.mjs'), `export const plugin = { name: 'by-path' };`);
    const pkg = path.join(dir, 'node_modules', 'streams-addon-demo');
    await import('node:fs/promises').then((fs) => fs.mkdir(pkg, { recursive: true }));
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'streams-addon-demo', type: 'module', exports: { '.': { import: './main.js' } } }));
    await writeFile(path.join(pkg, 'main.js'), `export default { name: 'by-package' };`);
    const kernel = new Kernel(
      buildConfig({ log: { level: 'silent' }, plugins: [...NO_CORE, './addon.mjs', 'streams-addon-demo'] }, dir),
    );
    await kernel.boot();
    expect(kernel.pluginNames).toEqual(['by-path', 'by-package']);
    await kernel.shutdown();

    const missing = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: [...NO_CORE, 'no-such-addon'] }, dir));
    await expect(missing.boot()).rejects.toThrow(/plugin "no-such-addon" is not a core plugin .* no package of that name is installed/);
    const notPlugin = new Kernel(buildConfig({ log: { level: 'silent' }, plugins: [...NO_CORE, './kernel-nothing.mjs'] }, dir));
    await writeFile(path.join(dir, 'kernel-nothing.mjs'), 'export const x = 1;');
    await expect(notPlugin.boot()).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('hooks', () => {
  it('runs listeners by priority, awaits them, and propagates a veto', async () => {
    const hooks = new Hooks();
    const order: string[] = [];
    hooks.on('entry.creating', async () => void order.push('late'), { priority: 10 });
    hooks.on('entry.creating', () => void order.push('early'), { priority: -1 });
    const off = hooks.on('entry.creating', () => void order.push('removed'));
    off();
    await hooks.emit('entry.creating', { stream: 's', key: 1, entry: {} });
    expect(order).toEqual(['early', 'late']);
    hooks.on('entry.deleting', () => {
      throw new Error('vetoed');
    });
    await expect(hooks.emit('entry.deleting', { stream: 's', key: 1, entry: {} })).rejects.toThrow('vetoed');
    expect(hooks.has('entry.saved')).toBe(false);
  });
});

describe('decorator metadata (guards against an esbuild-based vite)', () => {
  it('emits design:paramtypes so tsyringe injects by type', () => {
    class Clock {}
    @injectable()
    class Service {
      constructor(readonly clock: Clock) {}
    }
    expect(Reflect.getMetadata('design:paramtypes', Service)[0]).toBe(Clock);
  });
});

describe('errors from another copy of the kernel module', () => {
  it('are recognised as AppErrors (and their subclass) by brand', async () => {
    const { AppError, NotFoundError, ValidationError, isAppError } = await import('../../kernel/errors.js');
    const brand = Symbol.for('streams-kernel:app-error');
    const foreign = Object.assign(new Error('Stream [x] not found.'), { name: 'NotFoundError', status: 404, errors: [{ message: 'x' }], [brand]: true });
    expect(isAppError(foreign)).toBe(true);
    expect(foreign instanceof AppError).toBe(true);
    expect(foreign instanceof NotFoundError).toBe(true);
    expect(foreign instanceof ValidationError).toBe(false);
    expect(new Error('plain') instanceof AppError).toBe(false);
    expect(new NotFoundError('x') instanceof ValidationError).toBe(false);
  });
});
