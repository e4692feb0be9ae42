/**
 * Public surface of the mongodb plugin: the `database` source type, the `database`
 * definition store (shared definitions for several nodes), and named connections.
 */
export { MONGODB, MONGODB_DRIVER } from './tokens.js';
export { MongoConnections, type MongoDriver } from './connections.js';
export { mongodbPlugin as default, type MongoPluginOptions } from './plugin.js';
export { mongodbSettings, type MongoSettings, type MongoConnectionConfig } from './settings.js';
