import { definePlugin, type Logger } from '../../kernel/index.js';
import { HTTP_SERVER } from '../http/index.js';
import { SOURCES, type SourceRegistry } from '../sources/index.js';
import { STREAM_REGISTRY, type StreamRegistry } from '../streams/index.js';
import { requireCollectionName } from './collection-name.js';
import { MongoConnections } from './connections.js';
import { IndexBuilds } from './index-builds.js';
import { checkDatabaseSource } from './definition-check.js';
import { MongoDefinitionStore } from './definition-store.js';
import { MongoSource } from './source.js';
import { mongodbSettings } from './settings.js';
import { MONGODB, MONGODB_DRIVER } from './tokens.js';
import { FollowedChanges, MONGODB_CHANGES } from './followed-changes.js';

export interface MongoPluginOptions {
  /** How long a request (or boot's definition load) waits for a connection not up yet. */
  connect_wait_ms: number;
  /** Backoff of the background reconnect loop (and of re-opening change streams). */
  retry_initial_ms: number;
  retry_max_ms: number;
  /** `maxTimeMS` of every read: past it the server stops the query and the client gets 503. */
  query_timeout_ms: number;
}

/** http.shutdown_timeout_ms's default, used when the http plugin is not loaded. */
const DEFAULT_DRAIN_MS = 10_000;

const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    connect_wait_ms: { type: 'integer', minimum: 0, default: 2000 },
    retry_initial_ms: { type: 'integer', minimum: 10, default: 500 },
    retry_max_ms: { type: 'integer', minimum: 10, default: 30000 },
    query_timeout_ms: { type: 'integer', minimum: 1, default: 5000 },
  },
};

/**
 * The mongodb plugin: the `database` source type (entries in MongoDB collections), the
 * `database` definition store (the meta-stream in MongoDB, shared by N nodes), one pooled
 * client per named connection, and a `/readyz` check that follows connectivity.
 */
export const mongodbPlugin = definePlugin<MongoPluginOptions>(() => {
  let connections: MongoConnections;
  let indexBuilds: IndexBuilds;
  return {
    name: 'mongodb',
    settings: mongodbSettings,
    requires: ['streams', 'fields', 'sources'],
    provides: [MONGODB, MONGODB_CHANGES],
    // MONGODB_DRIVER (a stand-in, tests) and HTTP_SERVER (for readiness) are looked up with
    // `find`, not declared: a declared use must have a provider, and both may be absent (the
    // kernel has no optional `uses`).
    uses: [SOURCES, STREAM_REGISTRY],
    optionsSchema,
    register({ provide, use, find, config, logger, options }) {
      connections = new MongoConnections(config.mongodb, logger, {
        retry: { initialDelayMs: options.retry_initial_ms, maxDelayMs: options.retry_max_ms },
        // Looked up when a client is made: the plugin providing it (tests) may register after us.
        driver: () => find(MONGODB_DRIVER),
      });
      indexBuilds = new IndexBuilds(logger);
      provide(MONGODB, connections);
      // Every followed change with its resume token and cluster time (realtime across nodes).
      const changes = new FollowedChanges();
      provide(MONGODB_CHANGES, changes);

      use(SOURCES).registerType(
        'database',
        (context) =>
          new MongoSource(context, connections, {
            connectWaitMs: options.connect_wait_ms,
            queryTimeoutMs: options.query_timeout_ms,
            indexBuilds,
            retryInitialMs: options.retry_initial_ms,
            retryMaxMs: options.retry_max_ms,
            changes,
          }),
      );

      const registry = use(STREAM_REGISTRY);
      registry.addCheck((definition) => checkDatabaseSource(definition, connections));
      registry.registerStore('database', () => {
        const setting = config.streams.source;
        const connection = typeof setting.connection === 'string' ? setting.connection : 'default';
        const collection = requireCollectionName(setting.table ?? 'core_streams', config.file ?? 'config');
        return new MongoDefinitionStore(
          connections.get(connection),
          {
            collection,
            pollIntervalMs: config.streams.poll_interval_ms,
            connectWaitMs: options.connect_wait_ms,
            retryInitialMs: options.retry_initial_ms,
            retryMaxMs: options.retry_max_ms,
          },
          logger.child({ store: 'definitions' }),
        );
      });
    },
    boot({ use, find, config, logger }) {
      // Every configured connection is opened now (in the background: an unreachable
      // server is logged and retried, it never stops the boot).
      for (const name of Object.keys(config.mongodb.connections)) connections.get(name);
      openDatabaseStreams(use(STREAM_REGISTRY), use(SOURCES), logger);
      // Ready needs a primary; index builds in progress (or failed) are shown, never waited for.
      // (No transport, no readiness to report: http is not required.)
      // A unique index that failed on stored duplicates leaves the node ready (the stream serves,
      // the rule still checks each write) but is shown: uniqueness across nodes does not hold.
      find(HTTP_SERVER)?.addReadinessCheck('mongodb', () => {
        const builds = indexBuilds.report();
        const failed = indexBuilds.failedUniqueIndexes();
        if (builds.length === 0 && failed.length === 0) return connections.ready();
        const details: Record<string, unknown> = {};
        if (builds.length > 0) details.index_builds = builds;
        if (failed.length > 0) details.unique_index_failures = failed;
        return { ready: connections.ready(), details };
      });
    },
    async shutdown({ config }) {
      // Clients in use by a source or the definition store close when those close (after
      // the HTTP server drained: the sources and streams plugins shut down after http);
      // an unused client closes now. Without the http plugin there is no `http` config
      // section (its settings are the plugin's): its default drain time is used.
      const drainMs = (config as { http?: { shutdown_timeout_ms?: number } }).http?.shutdown_timeout_ms ?? DEFAULT_DRAIN_MS;
      await connections.shutdown(drainMs + 5000);
    },
  };
});

/** Open the source of every `database` stream now, so its index build starts at boot, not at the first request. */
function openDatabaseStreams(registry: StreamRegistry, sources: SourceRegistry, logger: Logger): void {
  for (const definition of registry.list()) {
    if (definition.config.source.type !== 'database') continue;
    try {
      sources
        .for(definition)
        .open()
        .catch((error: unknown) => logger.warn({ stream: definition.id, err: { message: (error as Error).message } }, 'database stream not open yet; it opens at its first request'));
    } catch (error) {
      logger.error({ stream: definition.id, err: error }, 'database stream cannot be opened');
    }
  }
}
