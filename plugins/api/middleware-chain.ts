import type { HttpReply, HttpRequest } from '../http/index.js';
import type { ApiRequest, ApiRouteInfo, Middleware, MiddlewareCheck, Next } from './contracts.js';

/** What a middleware's `handle` answers for a check's verdict (`MiddlewareCheck`): its reply, or `next()`'s. */
export function handOn(verdict: ReturnType<MiddlewareCheck>, next: Next): HttpReply | Promise<HttpReply> {
  if (verdict === undefined) return next();
  return verdict instanceof Promise ? verdict.then((reply) => reply ?? next()) : verdict;
}

/**
 * A middleware made of its synchronous form alone (`MiddlewareCheck`): the function hands on
 * or answers as the check decides, and carries the check for the dispatcher's synchronous path.
 */
export function checkMiddleware(check: MiddlewareCheck): Middleware {
  const middleware: Middleware = (request, next) => handOn(check(request), next);
  middleware.check = check;
  return middleware;
}

/** Run `chain[index..]` then `last`; a middleware that throws is a rejected reply. */
export function runChain(chain: readonly Middleware[], index: number, request: ApiRequest, last: () => Promise<HttpReply>): Promise<HttpReply> {
  if (index === chain.length) return last();
  try {
    // The last middleware's next() is `last` itself: one function fewer per request.
    const next = index + 1 === chain.length ? last : () => runChain(chain, index + 1, request, last);
    return Promise.resolve(chain[index]!(request, next));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * An interface's middleware around a handler outside the API's own routes (the control panel's
 * page, a stream's `routes`): the request seen as an `ApiRequest` with `api`, so the same
 * middleware (a gate, auth, access) runs there as on the API, then `last`.
 */
export function runMiddleware(request: HttpRequest, api: ApiRouteInfo, chain: readonly Middleware[], last: () => HttpReply | Promise<HttpReply>): Promise<HttpReply> {
  // Made on the request itself before the view is derived from it: locals are created on first
  // use, and made through the view they would be its own, unseen by `last` (the caller, #28).
  void request.locals;
  const view = Object.assign(Object.create(request) as HttpRequest, { api }) as ApiRequest;
  return runChain(chain, 0, view, async () => last());
}
