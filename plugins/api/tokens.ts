import { serviceRef } from '../../kernel/index.js';
import type { ApiService, MiddlewareRegistry } from './contracts.js';

/** The API service (provided in register): `context.use(API)`. */
export const API = serviceRef<ApiService>('api');
/** The middleware registry alone: `context.use(API_MIDDLEWARE)`. */
export const API_MIDDLEWARE = serviceRef<MiddlewareRegistry>('api-middleware');
