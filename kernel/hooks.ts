import { tagErrorWithPlugin } from './errors.js';
import type { HookMap, HookName } from './hook-map.js';

/** What `notify` answers when every listener was synchronous (one shared, settled promise). */
const DONE: Promise<void> = Promise.resolve();

export type HookListener<K extends HookName> = (payload: HookMap[K]) => void | Promise<void>;

interface Registered<K extends HookName> {
  listener: HookListener<K>;
  priority: number;
  /** The plugin that registered it (through its context's view of the bus), for error logs. */
  owner: string | undefined;
}

/**
 * The hook bus. Listeners run in priority order (lower first, then registration
 * order), one after another, and an error thrown by a listener propagates to the
 * emitter: that is how a `*ing` listener vetoes a write.
 */
export class Hooks {
  constructor(
    private readonly listeners = new Map<HookName, Registered<HookName>[]>(),
    private readonly owner?: string,
  ) {}

  /**
   * The same bus as one plugin sees it (its context's `hooks`): an error its listeners throw
   * carries the plugin's name, so the log line of a failed request names the culprit.
   */
  forPlugin(name: string): Hooks {
    return new Hooks(this.listeners, name);
  }

  on<K extends HookName>(name: K, listener: HookListener<K>, options: { priority?: number } = {}): () => void {
    const list = this.listeners.get(name) ?? [];
    const item = { listener, priority: options.priority ?? 0, owner: this.owner } as unknown as Registered<HookName>;
    list.push(item);
    // Stable sort keeps registration order among equal priorities.
    list.sort((a, b) => a.priority - b.priority);
    this.listeners.set(name, list);
    return () => {
      const current = this.listeners.get(name);
      if (!current) return;
      const index = current.indexOf(item);
      if (index >= 0) current.splice(index, 1);
    };
  }

  /** True when someone listens: lets hot paths skip building a payload. */
  has(name: HookName): boolean {
    const list = this.listeners.get(name);
    return list !== undefined && list.length > 0;
  }

  async emit<K extends HookName>(name: K, payload: HookMap[K]): Promise<void> {
    const list = this.listeners.get(name);
    if (!list || list.length === 0) return;
    for (const { listener, owner } of [...list]) {
      try {
        await (listener as HookListener<K>)(payload);
      } catch (error) {
        throw owner === undefined ? error : tagErrorWithPlugin(error, owner);
      }
    }
  }

  /**
   * Tell every listener of an after-the-fact hook (`entry.created`, `definition.changed`...):
   * each runs in its own try/catch, so one that throws is reported to `onError` (tagged with
   * its plugin's name) and never keeps the change from the listeners after it. Nothing can
   * be vetoed here: what the hook announces has happened already.
   */
  notify<K extends HookName>(name: K, payload: HookMap[K], onError: (error: unknown, plugin: string | undefined) => void): Promise<void> {
    const list = this.listeners.get(name);
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
