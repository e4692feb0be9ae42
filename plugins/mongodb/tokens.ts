/** Resolve the named MongoDB connections with `container.resolve<MongoConnections>(MONGODB)`. */
export const MONGODB = Symbol.for('streams-kernel:mongodb');
