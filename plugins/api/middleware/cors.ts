import { ConfigError } from '../../../kernel/index.js';
import type { Middleware, MiddlewareContext } from '../contracts.js';

/**
 * `cors`: origins from `api.cors.origins` (`*` for any). A matching Origin gets
 * `Access-Control-Allow-Origin` on every reply (errors included); a preflight (OPTIONS
 * with Access-Control-Request-Method) from a matching origin is answered here with 204.
 * Other origins get no CORS headers, so browsers block them.
 */
export function corsMiddleware(context: MiddlewareContext): Middleware {
  const settings = context.config.api.cors;
  const any = settings.origins.includes('*');
  if (any && settings.credentials) {
    // Echoing every origin with credentials would let any site act with the user's cookies.
    throw new ConfigError('api.cors: origins ["*"] cannot be combined with credentials: true; list the allowed origins', context.config.file, '/api/cors');
  }
  const origins = new Set(settings.origins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  const methods = settings.methods.join(', ');
  const headers = settings.headers.join(', ');
  const maxAge = String(settings.max_age);
  const expose = 'ETag, Location, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
  return (request, next) => {
    const origin = request.header('origin');
    if (origin === undefined) return next();
    if (!any && !origins.has(origin.toLowerCase())) return next();
    // With credentials a wildcard is not allowed by browsers: echo the origin instead.
    request.setResponseHeader('Access-Control-Allow-Origin', any && !settings.credentials ? '*' : origin);
    if (!any || settings.credentials) request.setResponseHeader('Vary', 'Origin');
    if (settings.credentials) request.setResponseHeader('Access-Control-Allow-Credentials', 'true');
    if (request.method === 'OPTIONS' && request.header('access-control-request-method') !== undefined) {
      return {
        status: 204,
        headers: [
          ['Access-Control-Allow-Methods', methods],
          ['Access-Control-Allow-Headers', headers],
          ['Access-Control-Max-Age', maxAge],
        ],
      };
    }
    request.setResponseHeader('Access-Control-Expose-Headers', expose);
    return next();
  };
}
