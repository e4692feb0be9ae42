/**
 * Public surface of the mongodb plugin: the `database` source type, the `database`
 * definition store (shared definitions for several nodes), and named connections.
 */
export { MONGODB, MONGODB_DRIVER } from './tokens.js';
export { MongoConnections, MongoConnection, DatabaseUnavailableError, DEFAULT_CLIENT_OPTIONS, defaultsUnder, type ConnectionsOptions, type MongoDriver, type RetryPolicy } from './connections.js';
export { MongoSource, type MongoSourceOptions } from './source.js';
export { MongoDefinitionStore, type DefinitionStoreOptions } from './definition-store.js';
export { buildFilter, buildSort, fieldPath, likeToRegexSource, LIKE_OPTIONS, MAX_LIKE_LENGTH, MAX_LIKE_WILDCARDS, translateClause } from './criteria.js';
export { toDocument, fromDocument, toId, keyOrder, keyKind, KEY_ORDER_FIELD, type KeyKind } from './documents.js';
export { mongodbPlugin as default, type MongoPluginOptions } from './plugin.js';
export { mongodbSettings, type MongoSettings, type MongoConnectionConfig } from './settings.js';
