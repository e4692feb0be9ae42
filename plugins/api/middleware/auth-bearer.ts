import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError, type KernelConfig } from '../../../kernel/index.js';
import type { Middleware, MiddlewareContext } from '../contracts.js';

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Tokens from `api.auth.tokens` and the environment variable `api.auth.tokens_env` (comma or whitespace separated). */
export function apiTokens(config: KernelConfig): string[] {
  const fromEnv = (process.env[config.api.auth.tokens_env] ?? '').split(/[\s,]+/).filter((t) => t.length > 0);
  return [...config.api.auth.tokens, ...fromEnv];
}

export function configuredTokens(context: MiddlewareContext): string[] {
  return apiTokens(context.config);
}

/**
 * `auth.bearer`: `Authorization: Bearer <token>`. Only SHA-256 digests of the tokens are
 * kept, and a presented token is compared with every one in constant time (no early
 * exit), so timing reveals nothing. 401 with `WWW-Authenticate` otherwise. On success
 * `request.locals.user` is `{ type: 'token', id }` (id: a digest prefix, never the token).
 */
export function bearerMiddleware(context: MiddlewareContext): Middleware {
  const digests = configuredTokens(context).map(digest);
  const realm = context.config.api.auth.realm.replace(/["\\]/g, '');
  if (digests.length === 0) {
    context.logger.warn(`auth.bearer: no tokens in api.auth.tokens or $${context.config.api.auth.tokens_env}; every request will be refused`);
  }
  const challenge = `Bearer realm="${realm}"`;
  const invalid = `Bearer realm="${realm}", error="invalid_token"`;
  return (request, next) => {
    const header = request.header('authorization');
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
    if (match === null) {
      request.setResponseHeader('WWW-Authenticate', challenge);
      throw new AppError(401, 'Unauthenticated.');
    }
    const presented = digest(match[1]!);
    let found = -1;
    for (let i = 0; i < digests.length; i++) {
      if (timingSafeEqual(presented, digests[i]!) && found === -1) found = i;
    }
    if (found === -1) {
      request.setResponseHeader('WWW-Authenticate', invalid);
      throw new AppError(401, 'Unauthenticated.');
    }
    request.locals.user = { type: 'token', id: digests[found]!.toString('hex').slice(0, 12) };
    return next();
  };
}
