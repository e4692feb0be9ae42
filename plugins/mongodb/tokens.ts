/** Resolve the named MongoDB connections with `container.resolve<MongoConnections>(MONGODB)`. */
export const MONGODB = Symbol.for('streams-kernel:mongodb');
/**
 * Optional: a factory of MongoClient-compatible clients `(url, options) => client`, used
 * instead of the driver when registered (by a plugin's register step). The test suites
 * register the stand-in replica set (test/mongodb/fake-server.ts) here to run whole apps,
 * two kernels on one "server"; an addon could wrap the driver (instrumentation).
 */
export const MONGODB_DRIVER = Symbol.for('streams-kernel:mongodb-driver');
