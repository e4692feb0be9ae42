/** Resolve the API service with `container.resolve<ApiService>(API)` (bound in register). */
export const API = Symbol.for('streams-kernel:api');
/** The middleware registry alone (`container.resolve<MiddlewareRegistry>(API_MIDDLEWARE)`). */
export const API_MIDDLEWARE = Symbol.for('streams-kernel:api-middleware');
