import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConfig, definePlugin, Hooks, Kernel, PluginTimeoutError } from '../../kernel/index.js';
import { memoryLogger } from '../helpers/logger.js';
import { DEFAULT_PLUGINS } from '../../kernel/core-plugins.js';
import { HTTP_SERVER } from '../../plugins/http/index.js';

/**
 * #30 item 1: every hook bounded and named. The kernel's lifecycle hooks run each listener
 * under its plugin's step limit; each hook has a declared kind; unknown names are refused.
 */
const REPO = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const ONLY_HTTP = DEFAULT_PLUGINS.filter((name) => name !== 'http').map((name) => ({ name, enabled: false }));
const dir = mkdtempSync(path.join(os.tmpdir(), 'hook-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const never = (): Promise<void> => new Promise(() => undefined);
const config = () => buildConfig({ plugins: ONLY_HTTP, http: { port: 0 } }, dir);

describe('the kernel lifecycle hooks, bounded and named', () => {
  it('a kernel.booted listener that never settles fails the boot within its plugin\'s limit, naming plugin and hook; the transport is drained', async () => {
    let url = '';
    const hangs = definePlugin({
      name: 'hangs-on-booted',
      timeouts: { boot: 150 },
      register: ({ hooks, use }) => void hooks.on('kernel.booted', () => {
        url = use(HTTP_SERVER).url;
        return never();
      }),
      requires: ['http'],
    });
    const kernel = new Kernel(config(), { plugins: [hangs], logger: memoryLogger().logger });
    const started = Date.now();
    const error = await kernel.boot().catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toBeInstanceOf(PluginTimeoutError);
    expect((error as Error).message).toBe('plugin "hangs-on-booted" did not finish its "kernel.booted" listener within 150 ms (give it longer with "boot_timeout_ms" in its "plugins" entry)');
    // The transport listened in its `ready` step and was drained by the failed boot's shutdown.
    expect(url).toMatch(/^http:/);
    await expect(request(`${url}/healthz`)).rejects.toThrow();
  });

  it('the launcher: a hanging kernel.booted listener of an addon fails the boot within its limit, naming it, exit 1', () => {
    const file = path.join(dir, 'hanging.json');
    writeFileSync(file, JSON.stringify({ plugins: [{ name: path.join(REPO, 'test/fixtures/hanging-booted') }] }));
    const started = Date.now();
    const run = spawnSync(process.execPath, [path.join(REPO, 'kernel/boot.js'), '--config', file, '--port', '0'], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('plugin "hanging-booted" did not finish its "kernel.booted" listener within 300 ms');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a kernel.booted listener that throws fails the boot naming its plugin', async () => {
    const { logger, lines } = memoryLogger();
    const throws = definePlugin({ name: 'throws-on-booted', register: ({ hooks }) => void hooks.on('kernel.booted', () => { throw new Error('no luck'); }) });
    const kernel = new Kernel(config(), { plugins: [throws], logger });
    await expect(kernel.boot()).rejects.toThrow('no luck');
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, plugin: 'throws-on-booted', hook: 'kernel.booted', msg: 'plugin "throws-on-booted" failed in its "kernel.booted" listener' }));
  });

  it('a kernel.shutdown listener that hangs or throws is logged naming its plugin; the other listeners and shutdowns run', async () => {
    const { logger, lines } = memoryLogger();
    const seen: string[] = [];
    const kernel = new Kernel(config(), {
      logger,
      timeouts: { shutdown: 100 },
      plugins: [
        definePlugin({ name: 'hangs', register: ({ hooks }) => void hooks.on('kernel.shutdown', never) }),
        definePlugin({ name: 'throws', register: ({ hooks }) => void hooks.on('kernel.shutdown', () => { throw new Error('boom'); }) }),
        definePlugin({ name: 'fine', register: ({ hooks }) => void hooks.on('kernel.shutdown', () => void seen.push('listener')), shutdown: () => void seen.push('shutdown') }),
      ],
    });
    await kernel.boot();
    await kernel.shutdown();
    expect(seen).toEqual(['listener', 'shutdown']);
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, plugin: 'hangs', msg: 'plugin "hangs" did not finish its "kernel.shutdown" listener within 100 ms (give it longer with "shutdown_timeout_ms" in its "plugins" entry)' }));
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, plugin: 'throws', msg: 'plugin "throws" failed in its "kernel.shutdown" listener' }));
  });

  it('a ready step that never settles fails the boot naming the plugin and the step', async () => {
    const kernel = new Kernel(config(), { plugins: [definePlugin({ name: 'slow-ready', timeouts: { boot: 100 }, ready: never })], logger: memoryLogger().logger });
    await expect(kernel.boot()).rejects.toThrow('plugin "slow-ready" did not finish its ready within 100 ms');
  });
});

describe('hook names and kinds', () => {
  it('a listener of an undeclared hook is refused at on(), naming the plugin and the hook', async () => {
    const typo = definePlugin({ name: 'typo', register: ({ hooks }) => void hooks.on('entry.cretaed' as never, () => undefined) });
    const kernel = new Kernel(config(), { plugins: [typo], logger: memoryLogger().logger });
    await expect(kernel.boot()).rejects.toThrow(/plugin "typo" listens to the hook "entry\.cretaed", which no loaded plugin declares \(known hooks: .*kernel\.booted/);
  });

  it('a hook declared by two plugins is refused naming both', async () => {
    const a = definePlugin({ name: 'a', emits: { 'x.done': 'after' } as never });
    const b = definePlugin({ name: 'b', emits: { 'x.done': 'veto' } as never });
    const kernel = new Kernel(config(), { plugins: [a, b], logger: memoryLogger().logger });
    await expect(kernel.boot()).rejects.toThrow('plugins "a" and "b" both declare the hook "x.done"');
  });

  it('an addon\'s own declared hook can be listened to by a plugin loaded before it', async () => {
    const heard: unknown[] = [];
    const listener = definePlugin({ name: 'listener', register: ({ hooks }) => void hooks.on('x.done' as never, (p: unknown) => void heard.push(p)) });
    const emitter = definePlugin({ name: 'emitter', emits: { 'x.done': 'after' } as never, boot: ({ hooks }) => hooks.emit('x.done' as never, { n: 1 } as never) });
    const kernel = new Kernel(config(), { plugins: [listener, emitter], logger: memoryLogger().logger });
    await kernel.boot();
    expect(heard).toEqual([{ n: 1 }]);
    await kernel.shutdown();
  });

  it('emit on an `after` hook isolates each listener and logs the failure; on a `veto` hook the first error aborts', async () => {
    const { logger, lines } = memoryLogger();
    const hooks = new Hooks({ strict: true, logger });
    hooks.declare('test', { 'entry.created': 'after', 'entry.creating': 'veto' });
    const ran: string[] = [];
    hooks.forPlugin('bad').on('entry.created', () => { throw new Error('after failed'); });
    hooks.forPlugin('good').on('entry.created', () => void ran.push('created'));
    await hooks.emit('entry.created', { stream: 's', key: 1, entry: {} });
    expect(ran).toEqual(['created']);
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, listener_plugin: 'bad', hook: 'entry.created' }));
    hooks.forPlugin('bad').on('entry.creating', () => { throw new Error('vetoed'); });
    hooks.forPlugin('good').on('entry.creating', () => void ran.push('creating'));
    await expect(hooks.emit('entry.creating', { stream: 's', key: 1, entry: {} })).rejects.toThrow('vetoed');
    expect(ran).toEqual(['created']);
    expect(hooks.kindOf('entry.created')).toBe('after');
  });

  it('watch: a list taken before any listener sees the listeners added and removed later, through any view of the bus', () => {
    const hooks = new Hooks();
    const watched = hooks.forPlugin('http').watch('request.handled');
    expect(watched.length).toBe(0);
    const off = hooks.forPlugin('metrics').on('request.handled', () => undefined);
    expect(watched.length).toBe(1);
    expect(hooks.has('request.handled')).toBe(true);
    off();
    expect(watched.length).toBe(0);
    expect(hooks.has('request.handled')).toBe(false);
  });
});

describe('background work', () => {
  it('context.background logs a failure naming the plugin and the task, and never rejects', async () => {
    const { logger, lines } = memoryLogger();
    let done: Promise<void> | undefined;
    const careless = definePlugin({ name: 'careless', boot: ({ background }) => void (done = background('refreshing rates', async () => { throw new Error('rates down'); })) });
    const kernel = new Kernel(config(), { plugins: [careless], logger });
    await kernel.boot();
    await expect(done).resolves.toBeUndefined();
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, plugin: 'careless', task: 'refreshing rates', msg: 'background work failed: refreshing rates (the node keeps serving)' }));
    await kernel.shutdown();
  });
});
