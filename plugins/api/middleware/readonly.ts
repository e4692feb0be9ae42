import { AppError } from '../../../kernel/index.js';
import type { Middleware } from '../contracts.js';

const READ = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * `readonly`: only GET and HEAD (and OPTIONS, which changes nothing) pass. The query
 * endpoint counts as a write. Denied with 405 and an `Allow` of the read methods left.
 */
export function readonlyMiddleware(): Middleware {
  return (request, next) => {
    if (!request.api.write) return next();
    const allow = request.api.allow.filter((m) => READ.has(m));
    request.setResponseHeader('Allow', (allow.length > 0 ? allow : ['OPTIONS']).join(', '));
    throw new AppError(405, 'This interface is read-only.');
  };
}
