import { AppError, type KernelConfig } from '../../kernel/index.js';
import { statusText, type HttpReply } from '../http/index.js';
import type { ApiRequest, MiddlewareHandler, Next } from './contracts.js';
import { handOn } from './middleware-chain.js';

/** A compiled `gate_except` pattern. */
export interface PathMatcher {
  test(path: string): boolean;
}

/**
 * Laravel's `Str::is`: `*` matches any run of characters (slashes included), anchored.
 * Matched by cutting the pattern at its `*`s (first part at the start, last at the end,
 * the others left to right with indexOf): linear in the path, where the regex form
 * (`^a.*b.*c$`) backtracked for seconds on a long hostile path.
 */
export function pathPattern(pattern: string): PathMatcher {
  const parts = pattern.replace(/^\/+/, '').split('*');
  const head = parts[0]!;
  if (parts.length === 1) return { test: (path) => path === head };
  const tail = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((p) => p !== '');
  return {
    test(path: string): boolean {
      const end = path.length - tail.length;
      if (end < head.length || !path.startsWith(head) || !path.endsWith(tail)) return false;
      let at = head.length;
      for (const part of middle) {
        const found = path.indexOf(part, at);
        if (found < 0 || found + part.length > end) return false;
        at = found + part.length;
      }
      return true;
    },
  };
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
  protected readonly except: PathMatcher[];

  constructor(protected readonly config: KernelConfig) {
    this.except = config.api.gate_except.map(pathPattern);
  }

  /** True when the request may use the API. The default checks `api.enabled`. */
  shouldEnable(_request: ApiRequest): boolean | Promise<boolean> {
    return this.config.api.enabled;
  }

  /** True when `gate_except` exempts the request from the check. */
  isExcepted(request: ApiRequest): boolean {
    if (this.except.length === 0) return false;
    const path = request.api.relativePath;
    for (const pattern of this.except) if (pattern.test(path)) return true;
    return false;
  }

  handle(request: ApiRequest, next: Next): HttpReply | Promise<HttpReply> {
    return handOn(this.check(request), next);
  }

  /** `handle` without `next` (the API's synchronous path): passes (`undefined`) or throws the denial. */
  check(request: ApiRequest): undefined | Promise<undefined> {
    if (this.isExcepted(request)) return undefined;
    const allowed = this.shouldEnable(request);
    if (allowed === true) return undefined;
    if (allowed === false) return this.deny();
    return allowed.then((ok) => (ok ? undefined : this.deny()));
  }

  protected deny(): never {
    // Without a message of its own the denial says what its status says: "Forbidden" for 403.
    const status = this.config.api.gate_status;
    throw new AppError(status, this.config.api.gate_message ?? statusText(status));
  }
}
