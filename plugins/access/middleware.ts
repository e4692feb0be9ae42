import { AppError } from '../../kernel/index.js';
import { ACCESS_LOCAL, checkMiddleware, type Middleware } from '../api/index.js';
import type { Authenticator } from './authenticator.js';
import type { CallerAccess } from './caller-access.js';

/**
 * `access`: tells who calls and leaves the decisions on the request (`locals.access`, read
 * by the endpoints through `accessOf`) and the caller on `locals.user` ({ id, roles, claims })
 * for middleware, hooks and addons. Answers vary by caller, so every answer says so
 * (`Vary: Authorization`) and no shared cache hands one caller's answer to another.
 * A cached or absent credential keeps the request synchronous.
 */
export function accessMiddleware(authenticator: () => Authenticator): Middleware {
  // It never answers by itself, only notes the caller: a synchronous form (MiddlewareCheck) says it all.
  return checkMiddleware((request) => {
    request.setResponseHeader('Vary', 'Authorization');
    const found = authenticator().identify(request.header('authorization'));
    if (found instanceof Promise) return found.then((access) => void settle(request.locals, access));
    settle(request.locals, found);
    return undefined;
  });
}

function settle(locals: Record<string, unknown>, access: CallerAccess): void {
  locals[ACCESS_LOCAL] = access;
  locals.user = access.user;
}

/**
 * `auth.bearer` while the access plugin is on: "this interface needs a caller", whoever
 * authenticated it (a JWT, an API key or an `api.auth` token); the anonymous caller gets 401.
 */
export function requireCaller(challenge: string): Middleware {
  return checkMiddleware((request) => {
    const access = request.locals[ACCESS_LOCAL] as CallerAccess | undefined;
    if (access === undefined || access.anonymous) {
      const error = new AppError(401, 'Unauthenticated.');
      error.headers = [['WWW-Authenticate', challenge]];
      throw error;
    }
    return undefined;
  });
}
