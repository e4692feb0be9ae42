import type { DependencyContainer } from 'tsyringe';
import { ConfigError, ExtensionLedger, type KernelConfig, type Logger } from '../../kernel/index.js';
import type { Middleware, MiddlewareFactory, MiddlewareHandler, MiddlewareRegistry } from './contracts.js';

const NAME = /^[A-Za-z0-9_.-]+$/;

function toFunction(made: Middleware | MiddlewareHandler): Middleware {
  if (typeof made === 'function') return made;
  const middleware: Middleware = (request, next) => made.handle(request, next);
  // A `check` stands for `handle` only where the same class declares both (MiddlewareHandler).
  if (typeof made.check === 'function' && declarer(made, 'check') === declarer(made, 'handle')) middleware.check = (request) => made.check!(request);
  return middleware;
}

/** The object of `made`'s prototype chain that holds `name` itself. */
function declarer(made: object, name: string): object | null {
  let at: object | null = made;
  while (at !== null && !Object.prototype.hasOwnProperty.call(at, name)) at = Object.getPrototypeOf(at) as object | null;
  return at;
}

/** Middleware by name; the config names them (`auth.bearer`, `throttle:60,1`), addons add more. */
export class DefaultMiddlewareRegistry implements MiddlewareRegistry {
  private readonly factories = new Map<string, MiddlewareFactory>();

  constructor(
    private readonly config: KernelConfig,
    private readonly container: DependencyContainer,
    private readonly logger: Logger,
    private readonly ledger: ExtensionLedger = new ExtensionLedger(),
  ) {}

  register(name: string, factory: MiddlewareFactory, options: { replace?: boolean } = {}): void {
    if (!NAME.test(name)) throw new Error(`middleware name "${name}" must match ${NAME.source}`);
    this.ledger.claim('middleware', name, options);
    this.factories.set(name, factory);
  }

  has(name: string): boolean {
    return this.factories.has(name);
  }

  names(): string[] {
    return [...this.factories.keys()].sort();
  }

  create(spec: string): Middleware {
    const colon = spec.indexOf(':');
    const name = colon === -1 ? spec : spec.slice(0, colon);
    const args = colon === -1 ? [] : spec.slice(colon + 1).split(',').map((a) => a.trim());
    const factory = this.factories.get(name);
    if (!factory) {
      throw new ConfigError(`unknown middleware "${name}" (registered: ${this.names().join(', ')})`, this.config.file ?? 'config', '/api');
    }
    return toFunction(factory({ args, spec, config: this.config, container: this.container, logger: this.logger }));
  }
}
