import { AppError, type KernelConfig } from '../../kernel/index.js';
import type { HttpReply } from '../http/index.js';
import type { ApiRequest, MiddlewareHandler, Next } from './contracts.js';

/** Laravel's `Str::is`: `*` matches any run of characters (slashes included), anchored. */
export function pathPattern(pattern: string): RegExp {
  const trimmed = pattern.replace(/^\/+/, '');
  const source = trimmed
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`);
}

/**
 * The default gate (`api.gate`), run on every API route after the `api.middleware`
 * group. Requests whose path matches `api.gate_except` skip the check; every other
 * request must pass `shouldEnable`, else it is answered with `gate_status` and
 * `gate_message`. An addon replaces the check by subclassing:
 *
 *   class AdminGate extends ApiGate {
 *     shouldEnable(request: ApiRequest) {
 *       return super.shouldEnable(request) && request.locals.user !== undefined;
 *     }
 *   }
 *   api.middleware.register('admin.gate', (ctx) => new AdminGate(ctx.config));
 *   // config: "api": { "gate_middleware": "admin.gate" }
 */
export class ApiGate implements MiddlewareHandler {
  protected readonly except: RegExp[];

  constructor(protected readonly config: KernelConfig) {
    this.except = config.api.gate_except.map(pathPattern);
  }

  /** True when the request may use the API. The default checks `api.enabled`. */
  shouldEnable(_request: ApiRequest): boolean | Promise<boolean> {
    return this.config.api.enabled;
  }

  /** True when `gate_except` exempts the request from the check. */
  isExcepted(request: ApiRequest): boolean {
    const path = request.api.relativePath;
    for (const pattern of this.except) if (pattern.test(path)) return true;
    return false;
  }

  handle(request: ApiRequest, next: Next): HttpReply | Promise<HttpReply> {
    if (this.isExcepted(request)) return next();
    const allowed = this.shouldEnable(request);
    if (allowed === true) return next();
    if (allowed === false) return this.deny();
    return allowed.then((ok) => (ok ? next() : this.deny()));
  }

  protected deny(): never {
    throw new AppError(this.config.api.gate_status, this.config.api.gate_message);
  }
}
