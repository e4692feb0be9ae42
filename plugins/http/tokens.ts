import { serviceRef } from '../../kernel/index.js';
import type { HttpServer } from './contracts.js';

/** The HTTP server (provided in register, listening after boot): `context.use(HTTP_SERVER)`. */
export const HTTP_SERVER = serviceRef<HttpServer>('http-server');
