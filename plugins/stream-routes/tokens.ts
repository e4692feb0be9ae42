/** Resolve with `container.resolve<StreamRoutes>(STREAM_ROUTES)`. */
export const STREAM_ROUTES = Symbol.for('streams-kernel:stream-routes');
