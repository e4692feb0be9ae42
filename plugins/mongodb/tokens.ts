import { serviceRef } from '../../kernel/index.js';
import type { MongoConnections, MongoDriver } from './connections.js';

/** The named MongoDB connections: `context.use(MONGODB)`. */
export const MONGODB = serviceRef<MongoConnections>('mongodb');
/**
 * Optional: a factory of MongoClient-compatible clients `(url, options) => client`, used
 * instead of the driver when a plugin provides it (in its register step). The test suites
 * provide the stand-in replica set (test/mongodb/fake-server.ts) here to run whole apps,
 * two kernels on one "server"; an addon could wrap the driver (instrumentation).
 */
export const MONGODB_DRIVER = serviceRef<MongoDriver>('mongodb-driver');
