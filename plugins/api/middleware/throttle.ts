import { AppError, ConfigError } from '../../../kernel/index.js';
import type { Middleware, MiddlewareContext } from '../contracts.js';

interface Window {
  count: number;
  resetAt: number;
}

/**
 * `throttle:N,M`: N requests per M minutes (default 1) per client: the authenticated
 * user when there is one (`locals.user.id`), else the client address. Fixed windows;
 * 429 with `Retry-After` once spent. `X-RateLimit-Limit`/`-Remaining` on every reply.
 */
export function throttleMiddleware(context: MiddlewareContext): Middleware {
  const [rawLimit, rawMinutes = '1'] = context.args;
  const limit = Number(rawLimit);
  const minutes = Number(rawMinutes);
  if (!Number.isInteger(limit) || limit < 1 || !Number.isFinite(minutes) || minutes <= 0) {
    throw new ConfigError(`middleware "${context.spec}": use throttle:<requests>,<minutes> with positive numbers`, context.config.file ?? 'config', '/api');
  }
  const windowMs = Math.round(minutes * 60_000);
  const windows = new Map<string, Window>();
  const MAX_CLIENTS = 10_000;
  const limitText = String(limit);

  const sweep = (now: number): void => {
    for (const [key, w] of windows) if (w.resetAt <= now) windows.delete(key);
  };

  return (request, next) => {
    const now = Date.now();
    const user = request.locals.user as { id?: unknown } | undefined;
    const key = user && user.id !== undefined ? `u:${String(user.id)}` : `ip:${request.ip}`;
    let w = windows.get(key);
    if (w === undefined || w.resetAt <= now) {
      if (windows.size >= MAX_CLIENTS) sweep(now);
      // Still full of live windows: drop the oldest, so many clients cannot grow memory.
      if (windows.size >= MAX_CLIENTS) windows.delete(windows.keys().next().value!);
      w = { count: 0, resetAt: now + windowMs };
      windows.set(key, w);
    }
    w.count++;
    request.setResponseHeader('X-RateLimit-Limit', limitText);
    request.setResponseHeader('X-RateLimit-Remaining', String(Math.max(0, limit - w.count)));
    if (w.count > limit) {
      request.setResponseHeader('Retry-After', String(Math.max(1, Math.ceil((w.resetAt - now) / 1000))));
      request.setResponseHeader('X-RateLimit-Reset', String(Math.ceil(w.resetAt / 1000)));
      throw new AppError(429, 'Too Many Attempts.');
    }
    return next();
  };
}
