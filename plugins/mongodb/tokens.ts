import { serviceRef } from '../../kernel/index.js';
import type { MongoConnections } from './connections.js';

/** The named MongoDB connections: `context.use(MONGODB)`. */
export const MONGODB = serviceRef<MongoConnections>('mongodb');
