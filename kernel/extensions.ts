/**
 * Who registered what, for every named registry of one kernel (field types, rules, source
 * types, cache stores, definition stores, middleware, endpoints, query methods, stream-route
 * handlers), as Fastify refuses a decorator added twice and Backstage closes its extension
 * points once plugins start:
 * - a name registered twice is refused, naming both plugins, unless the second passes
 *   `{ replace: true }` (then it owns the name, and the log says so);
 * - registration closes when the kernel starts serving (`ready`): a registry filled later
 *   would serve some requests with an extension and others without it.
 *
 * The kernel tells the ledger which plugin's step is running (steps run one at a time), so a
 * registry needs no plugin name from its callers. A ledger made outside a kernel (unit tests)
 * names the registrant "unknown" and never closes.
 */
export interface RegisterOptions {
  /** Take over a name another plugin registered (the log line names both). */
  replace?: boolean;
}

export interface Registration {
  /** The registry: "field type", "rule", "source type", "cache store", "middleware"... */
  registry: string;
  name: string;
  plugin: string;
}

export class RegistrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistrationError';
  }
}

export class ExtensionLedger {
  private readonly owners = new Map<string, Map<string, string>>();
  private running: string | undefined;
  private closed = false;

  /** The plugin whose lifecycle step runs now (the kernel sets it around each step). */
  set current(plugin: string | undefined) {
    this.running = plugin;
  }

  get current(): string | undefined {
    return this.running;
  }

  /** Serving starts: from now on every registration is refused. */
  close(): void {
    this.closed = true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Record that the running plugin registers `name` in `registry`; throws, naming both plugins,
   * when another registered it and `replace` was not asked, or when serving has started.
   * Answers the plugin that owned the name before (when replaced).
   */
  claim(registry: string, name: string, options: RegisterOptions = {}): string | undefined {
    const plugin = this.running ?? 'unknown';
    if (this.closed) throw new RegistrationError(`plugin "${plugin}" registers the ${registry} "${name}" after the kernel started serving: register in the plugin's register step`);
    const names = this.owners.get(registry) ?? new Map<string, string>();
    this.owners.set(registry, names);
    const previous = names.get(name);
    if (previous !== undefined && options.replace !== true) {
      const who = previous === plugin ? `plugin "${plugin}" registers it twice` : `plugins "${previous}" and "${plugin}" both register it`;
      throw new RegistrationError(`the ${registry} "${name}" is already registered: ${who} (pass { replace: true } to replace it)`);
    }
    names.set(name, plugin);
    return previous;
  }

  /** The plugin that owns a name (undefined: not registered). */
  owner(registry: string, name: string): string | undefined {
    return this.owners.get(registry)?.get(name);
  }

  /** Every registration, by registry then name (the boot's debug line, `streams extensions`). */
  list(): Registration[] {
    const out: Registration[] = [];
    for (const [registry, names] of [...this.owners].sort(([a], [b]) => a.localeCompare(b))) {
      for (const [name, plugin] of [...names].sort(([a], [b]) => a.localeCompare(b))) out.push({ registry, name, plugin });
    }
    return out;
  }
}
