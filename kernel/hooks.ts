import { ConfigError, tagErrorWithPlugin } from './errors.js';
import type { HookMap, HookName } from './hook-map.js';
import type { Logger } from './logger.js';

/** What `notify` answers when every listener was synchronous (one shared, settled promise). */
const DONE: Promise<void> = Promise.resolve();

export type HookListener<K extends HookName> = (payload: HookMap[K]) => void | Promise<void>;

/**
 * How the listeners of a hook run (Rollup's hook kinds, reduced to the two we need):
 * - `veto`: one after another; the first error aborts and reaches the emitter (`entry.creating`
 *   refuses a write, `definition.loading` a definition, `kernel.booted` the boot);
 * - `after`: the change has happened; each listener runs in its own try/catch and an error is
 *   logged naming its plugin, never keeping the change from the others (`entry.created`).
 */
export type HookKind = 'veto' | 'after';

/** The hooks a plugin emits, with their kinds: its `emits` (checked against the augmented `HookMap`). */
export type HookKinds = { [K in HookName]?: HookKind };

/** The kernel's own lifecycle hooks; both run each listener under its plugin's step time limit. */
export const KERNEL_HOOKS = { 'kernel.booted': 'veto', 'kernel.shutdown': 'after' } as const satisfies HookKinds;

interface Registered<K extends HookName> {
  listener: HookListener<K>;
  priority: number;
  /** The plugin that registered it (through its context's view of the bus), for error logs. */
  owner: string | undefined;
}

/** One kernel's hook state, shared by every plugin's view of the bus. */
interface HookTable {
  listeners: Map<HookName, Registered<HookName>[]>;
  /** Declared hooks: their kind and the plugin that emits them. */
  kinds: Map<string, { kind: HookKind; plugin: string }>;
  /** Refuse listeners of undeclared hooks (a kernel's bus); a bare `new Hooks()` (unit tests) accepts any name. */
  strict: boolean;
  logger: Logger | undefined;
}

export interface HooksOptions {
  /** Refuse `on()` for a hook no plugin declared (the kernel's bus). */
  strict?: boolean;
  /** Where an `after` hook's failing listeners are logged when the emitter gives no `onError`. */
  logger?: Logger;
}

/**
 * The hook bus. Listeners run in priority order (lower first, then registration order), one
 * after another; the hook's declared kind decides what a listener's error does (see HookKind).
 */
export class Hooks {
  private readonly table: HookTable;

  constructor(options: HooksOptions = {}, table?: HookTable, private readonly owner?: string) {
    this.table = table ?? { listeners: new Map(), kinds: new Map(), strict: options.strict === true, logger: options.logger };
  }

  /**
   * The same bus as one plugin sees it (its context's `hooks`): an error its listeners throw
   * carries the plugin's name, so the log line of a failed request names the culprit.
   */
  forPlugin(name: string): Hooks {
    return new Hooks({}, this.table, name);
  }

  /**
   * Declare the hooks `plugin` emits (the kernel does it from each plugin's `emits`, before any
   * `register`). A hook declared by two plugins is refused naming both.
   */
  declare(plugin: string, kinds: HookKinds): void {
    for (const [name, kind] of Object.entries(kinds) as Array<[HookName, HookKind]>) {
      if (kind !== 'veto' && kind !== 'after') throw new ConfigError(`plugin "${plugin}" declares the hook "${name}" with the unknown kind "${String(kind)}" (veto or after)`, undefined, '/plugins');
      const owner = this.table.kinds.get(name)?.plugin;
      if (owner !== undefined && owner !== plugin) throw new ConfigError(`plugins "${owner}" and "${plugin}" both declare the hook "${name}"`, undefined, '/plugins');
      this.table.kinds.set(name, { kind, plugin });
    }
  }

  /** The declared kind of a hook (undefined: not declared; a bare bus treats it as `veto`). */
  kindOf(name: HookName): HookKind | undefined {
    return this.table.kinds.get(name)?.kind;
  }

  /** Every declared hook with its kind and the plugin that emits it (for `--list-extensions` and docs). */
  declared(): Array<{ name: string; kind: HookKind; plugin: string }> {
    return [...this.table.kinds].map(([name, { kind, plugin }]) => ({ name, kind, plugin }));
  }

  on<K extends HookName>(name: K, listener: HookListener<K>, options: { priority?: number } = {}): () => void {
    if (this.table.strict && !this.table.kinds.has(name)) {
      const known = [...this.table.kinds.keys()].sort().join(', ');
      throw new ConfigError(`${this.owner === undefined ? 'a listener' : `plugin "${this.owner}"`} listens to the hook "${name}", which no loaded plugin declares (known hooks: ${known})`, undefined, '/plugins');
    }
    // One list per hook for the life of the bus, changed in place (see `watch`).
    const list = this.table.listeners.get(name) ?? [];
    const item = { listener, priority: options.priority ?? 0, owner: this.owner } as unknown as Registered<HookName>;
    list.push(item);
    // Stable sort keeps registration order among equal priorities.
    list.sort((a, b) => a.priority - b.priority);
    this.table.listeners.set(name, list);
    return () => {
      const current = this.table.listeners.get(name);
      if (!current) return;
      const index = current.indexOf(item);
      if (index >= 0) current.splice(index, 1);
    };
  }

  /** True when someone listens: lets hot paths skip building a payload. */
  has(name: HookName): boolean {
    const list = this.table.listeners.get(name);
    return list !== undefined && list.length > 0;
  }

  /**
   * `has` for a path run on every request: the hook's own listener list (the same array for
   * the life of the bus, listeners added and removed in place), whose `length` is read
   * instead of a lookup by name per request.
   */
  watch(name: HookName): { readonly length: number } {
    let list = this.table.listeners.get(name);
    if (list === undefined) {
      list = [];
      this.table.listeners.set(name, list);
    }
    return list;
  }

  /** The listeners of a hook in run order, with their plugins (the kernel bounds each in time). */
  listenersOf<K extends HookName>(name: K): Array<{ listener: HookListener<K>; owner: string | undefined }> {
    return (this.table.listeners.get(name) ?? []).map(({ listener, owner }) => ({ listener: listener as HookListener<K>, owner }));
  }

  /**
   * Run a hook's listeners as its kind says: a `veto` hook's first error propagates to the
   * emitter (tagged with the listener's plugin); an `after` hook is `notify`d, each failure logged.
   */
  async emit<K extends HookName>(name: K, payload: HookMap[K]): Promise<void> {
    const list = this.table.listeners.get(name);
    if (!list || list.length === 0) return;
    if (this.table.kinds.get(name)?.kind === 'after') return this.notify(name, payload, (error, plugin) => this.logFailure(name, error, plugin));
    for (const { listener, owner } of [...list]) {
      try {
        await (listener as HookListener<K>)(payload);
      } catch (error) {
        throw owner === undefined ? error : tagErrorWithPlugin(error, owner);
      }
    }
  }

  private logFailure(name: HookName, error: unknown, plugin: string | undefined): void {
    this.table.logger?.error({ err: error, listener_plugin: plugin, hook: name }, `a listener of "${name}"${plugin === undefined ? '' : ` (plugin "${plugin}")`} failed; the other listeners ran`);
  }

  /**
   * Tell every listener of an after-the-fact hook (`entry.created`, `definition.changed`...):
   * each runs in its own try/catch, so one that throws is reported to `onError` (tagged with
   * its plugin's name) and never keeps the change from the listeners after it. Nothing can
   * be vetoed here: what the hook announces has happened already.
   */
  notify<K extends HookName>(name: K, payload: HookMap[K], onError: (error: unknown, plugin: string | undefined) => void): Promise<void> {
    const list = this.table.listeners.get(name);
    if (!list || list.length === 0) return DONE;
    // Synchronous listeners (a metrics counter on `request.handled`, once per request) run
    // without a promise or a microtask; the first one that returns a promise hands the rest
    // to the awaiting path, so listeners still run one after another, in order.
    const snapshot = [...list];
    for (let i = 0; i < snapshot.length; i++) {
      const { listener, owner } = snapshot[i]!;
      let result: void | Promise<void>;
      try {
        result = (listener as HookListener<K>)(payload);
      } catch (error) {
        onError(owner === undefined ? error : tagErrorWithPlugin(error, owner), owner);
        continue;
      }
      if (result instanceof Promise) return this.notifyRest(snapshot, i, result, payload, onError);
    }
    return DONE;
  }

  private async notifyRest<K extends HookName>(
    snapshot: Registered<HookName>[],
    index: number,
    pending: Promise<void>,
    payload: HookMap[K],
    onError: (error: unknown, plugin: string | undefined) => void,
  ): Promise<void> {
    for (let i = index; i < snapshot.length; i++) {
      const { listener, owner } = snapshot[i]!;
      try {
        await (i === index ? pending : (listener as HookListener<K>)(payload));
      } catch (error) {
        onError(owner === undefined ? error : tagErrorWithPlugin(error, owner), owner);
      }
    }
  }
}
