/** Resolve the FieldsService with `container.resolve<FieldsService>(FIELDS)`. */
export const FIELDS = Symbol.for('streams-kernel:fields');
