import { serviceRef } from '../../kernel/index.js';
import type { StreamRoutes } from './contracts.js';

/** Stream route handlers and view renderers: `context.use(STREAM_ROUTES)`. */
export const STREAM_ROUTES = serviceRef<StreamRoutes>('stream-routes');
