import { AppError, ConfigError } from '../../../kernel/index.js';
import type { ApiRequest, Middleware, MiddlewareContext } from '../contracts.js';

interface Window {
  count: number;
  resetAt: number;
}

/**
 * A throttle also hears of requests another middleware denied (401/403) before it ran,
 * and refuses an address that spent its window before any middleware runs: a client
 * guessing tokens gets 429s, not endless 401s.
 */
export type ThrottleMiddleware = Middleware & { onDenied(request: ApiRequest): void; refuseEarly(request: ApiRequest): void };

/** Live windows kept per throttle; past that, new clients share one window (never a reset of another's). */
const MAX_CLIENTS = 10_000;
const OVERFLOW = 'overflow';

/**
 * `throttle:N,M`: N requests per M minutes (default 1) per client: the authenticated
 * user when there is one (`locals.user.id`), else the client address. Fixed windows;
 * 429 with `Retry-After` once spent. `X-RateLimit-Limit`/`-Remaining` on every reply.
 * A 401/403 given by a middleware before this one (a wrong token) still counts against
 * the client's address: guessing tokens is throttled wherever the throttle sits.
 */
export function throttleMiddleware(context: MiddlewareContext): ThrottleMiddleware {
  const [rawLimit, rawMinutes = '1'] = context.args;
  const limit = Number(rawLimit);
  const minutes = Number(rawMinutes);
  if (!Number.isInteger(limit) || limit < 1 || !Number.isFinite(minutes) || minutes <= 0) {
    throw new ConfigError(`middleware "${context.spec}": use throttle:<requests>,<minutes> with positive numbers`, context.config.file ?? 'config', '/api');
  }
  const windowMs = Math.round(minutes * 60_000);
  const windows = new Map<string, Window>();
  const limitText = String(limit);
  const counted = Symbol('throttle counted');

  /** The client's live window, created when none; when the table is full of live windows, the shared overflow one. */
  const windowOf = (key: string, now: number): Window => {
    let w = windows.get(key);
    if (w !== undefined && w.resetAt > now) return w;
    if (w !== undefined) windows.delete(key);
    if (windows.size >= MAX_CLIENTS) for (const [k, old] of windows) if (old.resetAt <= now) windows.delete(k);
    if (windows.size >= MAX_CLIENTS) return overflow(now);
    w = { count: 0, resetAt: now + windowMs };
    windows.set(key, w);
    return w;
  };
  const overflow = (now: number): Window => {
    let w = windows.get(OVERFLOW);
    if (w === undefined || w.resetAt <= now) {
      w = { count: 0, resetAt: now + windowMs };
      windows.set(OVERFLOW, w);
    }
    return w;
  };

  const refuse = (request: ApiRequest, w: Window, now: number): never => {
    request.setResponseHeader('Retry-After', String(Math.max(1, Math.ceil((w.resetAt - now) / 1000))));
    request.setResponseHeader('X-RateLimit-Reset', String(Math.ceil(w.resetAt / 1000)));
    throw new AppError(429, 'Too Many Attempts.');
  };

  const middleware = ((request, next) => {
    const now = Date.now();
    const user = request.locals.user as { id?: unknown } | undefined;
    // The anonymous caller of the access plugin has the id null: every anonymous client is its own address, never one shared bucket.
    const key = user && user.id !== undefined && user.id !== null ? `u:${String(user.id)}` : `ip:${request.ip}`;
    const w = windowOf(key, now);
    w.count++;
    request.locals[counted as unknown as string] = true;
    request.setResponseHeader('X-RateLimit-Limit', limitText);
    request.setResponseHeader('X-RateLimit-Remaining', String(Math.max(0, limit - w.count)));
    if (w.count > limit) refuse(request, w, now);
    return next();
  }) as ThrottleMiddleware;
  middleware.refuseEarly = (request) => {
    const now = Date.now();
    const w = windows.get(`ip:${request.ip}`);
    if (w !== undefined && w.resetAt > now && w.count >= limit) refuse(request, w, now);
  };
  middleware.onDenied = (request) => {
    if (request.locals[counted as unknown as string] === true) return;
    windowOf(`ip:${request.ip}`, Date.now()).count++;
  };
  return middleware;
}
