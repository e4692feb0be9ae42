import { ApiGate } from '../gate.js';
import type { MiddlewareRegistry } from '../contracts.js';
import { bearerMiddleware } from './auth-bearer.js';
import { corsMiddleware } from './cors.js';
import { readonlyMiddleware } from './readonly.js';
import { throttleMiddleware } from './throttle.js';

/** The middleware that ship with the API. */
export function registerBuiltinMiddleware(registry: MiddlewareRegistry): void {
  registry.register('api.gate', (context) => new ApiGate(context.config));
  registry.register('auth.bearer', bearerMiddleware);
  registry.register('throttle', throttleMiddleware);
  registry.register('cors', corsMiddleware);
  registry.register('readonly', readonlyMiddleware);
}
