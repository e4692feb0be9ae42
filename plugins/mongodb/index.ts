/**
 * Public surface of the mongodb plugin: the `database` source type, the `database`
 * definition store (shared definitions for several nodes), and named connections.
 */
export { MONGODB, MONGODB_DRIVER } from './tokens.js';
export { FollowedChanges, MONGODB_CHANGES, type FollowedChange } from './followed-changes.js';
export type { ChangePosition } from './change-follower.js';
export type { FollowCoverage } from './collection-watcher.js';
export type { ChangeReplay, ReplayedChange } from './change-replay.js';
export { MongoConnections, type MongoDriver } from './connections.js';
export { mongodbPlugin as default, type MongoPluginOptions } from './plugin.js';
export { mongodbSettings, type MongoSettings, type MongoConnectionConfig } from './settings.js';
