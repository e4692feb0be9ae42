/** Resolve the StreamRegistry with `container.resolve<StreamRegistry>(STREAM_REGISTRY)`. */
export const STREAM_REGISTRY = Symbol.for('streams-kernel:stream-registry');
