/** Resolve the running server with `container.resolve<HttpServer>(HTTP_SERVER)` (bound in register, listening after boot). */
export const HTTP_SERVER = Symbol.for('streams-kernel:http-server');
