/** Resolve the SourceRegistry with `container.resolve<SourceRegistry>(SOURCES)`. */
export const SOURCES = Symbol.for('streams-kernel:sources');
