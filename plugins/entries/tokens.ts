/** Resolve the EntriesService with `container.resolve<EntriesService>(ENTRIES)`. */
export const ENTRIES = Symbol.for('streams-kernel:entries');
