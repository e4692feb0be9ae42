import path from 'node:path';
import { ConfigError, definePlugin, serviceRef } from '../../kernel/index.js';
import type { EntryHookPayload } from '../entries/index.js';
import { API } from '../api/index.js';
import { ENTRIES, type EntriesService } from '../entries/index.js';
import { HTTP_SERVER, type StreamSink } from '../http/index.js';
// The service token only (not the plugin's index): an app without MongoDB never loads the driver.
import type { FollowedChanges } from '../mongodb/index.js';
import { SOURCES } from '../sources/index.js';
import { STREAM_REGISTRY, type StreamDefinition, type StreamRegistry } from '../streams/index.js';
import { ClusterChanges } from './cluster-changes.js';
import { SharedOutbox } from './shared-outbox.js';
import { catchUpWebhooks } from './outbox-catch-up.js';
import { Admission } from './admission.js';
import { changesEndpoint } from './changes-endpoint.js';
import { ChangeFeed, type ChangeEvent } from './feed.js';
import { HistoryLoad } from './history-load.js';
import { originCheck } from './origin.js';
import { RealtimeSession } from './socket-session.js';
import { REALTIME, type Realtime } from './tokens.js';
import { realtimeSettings } from './settings.js';
import { socketMessage, topicOf } from './subscription.js';
import { STREAM_WEBHOOKS_SCHEMA, streamSecretVariable, Webhooks, type StreamWebhook } from './webhooks.js';

/**
 * The mongodb plugin's MONGODB_CHANGES, by its id (a service ref is a global symbol): importing
 * that plugin's index at run time would load the MongoDB driver into every application.
 */
const MONGODB_CHANGES = serviceRef<FollowedChanges>('mongodb-changes');

/** Headers of an upgrade request that say nothing about who asks (not passed to access checks). */
const UPGRADE_HEADERS = new Set(['upgrade', 'connection', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol']);
/** How much longer than a webhook post a shared-outbox claim must last (see the check in register). */
const LEASE_MARGIN_MS = 1000;

/**
 * The realtime plugin (issue #19): one change feed per stream, fed by the entry hooks
 * (API writes and, through live file sync, edits on disk), served as Server-Sent Events
 * and JSON pages (`GET <prefix>/streams/{stream}/changes`), WebSocket subscriptions
 * (`<prefix>/realtime`) and signed webhooks with a durable outbox. docs/realtime.md.
 */
export const realtimePlugin = definePlugin(() => {
  let realtime: Realtime;
  return {
    name: 'realtime',
    settings: realtimeSettings,
    requires: ['api', 'entries', 'streams', 'http'],
    provides: [REALTIME],
    // MONGODB_CHANGES is looked up with `find`, not declared: a declared use must have a
    // provider, and the mongodb plugin is optional (the kernel has no optional `uses`).
    uses: [STREAM_REGISTRY, API, ENTRIES, HTTP_SERVER],
    register({ provide, use, find, config, hooks, logger, background }) {
      const settings = config.realtime;
      const folder = path.join(config.streams.data_path, '.realtime');
      // The context's logger binds `plugin` already (a child binding it again repeated the key).
      const log = logger;
      const kept = settings.history;
      const feed = new ChangeFeed(
        folder,
        { count: kept.count, maxAgeSeconds: kept.max_age_seconds, maxBytes: kept.max_bytes, memoryBytes: kept.memory_bytes, maxChangeBytes: kept.max_change_bytes },
        log,
      );
      const admission = new Admission(settings.limits);
      const streams = use(STREAM_REGISTRY);
      const registry = (): StreamRegistry => streams;
      // A stream may declare its own webhooks (`"webhooks": [...]` in its definition), to hosts the
      // operator allows: a definition can be written over the API, and must not make the server
      // post to any address it likes.
      hooks.on('definition.extend', ({ extend }) => extend('webhooks', STREAM_WEBHOOKS_SCHEMA));
      const hosts = new Set(settings.stream_webhook_hosts.map((h) => h.toLowerCase()));
      const allowedHost = (url: string): boolean => {
        try {
          return hosts.has(new URL(url).hostname.toLowerCase());
        } catch {
          return false;
        }
      };
      const secrets = settings.stream_webhook_secrets;
      streams.addCheck((definition) =>
        ((definition.extra.webhooks as StreamWebhook[] | undefined) ?? []).flatMap((hook, i) => {
          const problems: Array<{ path: string; message: string }> = [];
          if (!allowedHost(hook.url)) {
            problems.push({ path: `/webhooks/${i}/url`, message: `posts to a host not in realtime.stream_webhook_hosts (${hosts.size === 0 ? 'none are allowed' : [...hosts].join(', ')})` });
          }
          const own = streamSecretVariable(secrets, definition.id);
          if (hook.secret_env !== undefined && hook.secret_env !== own) {
            problems.push({
              path: `/webhooks/${i}/secret_env`,
              message: `is not the secret of this stream: realtime.stream_webhook_secrets maps [${definition.id}] to ${own ?? 'no variable'} (a stream signs only with its own)`,
            });
          }
          return problems;
        }),
      );
      const webhooks = new Webhooks(
        folder,
        settings.webhooks,
        {
          timeoutMs: settings.webhook_timeout_ms,
          maxAttempts: settings.webhook_max_attempts,
          retryBaseMs: settings.webhook_retry_base_ms,
          maxAgeMs: settings.webhook_max_age_seconds * 1000,
          outboxBytes: settings.outbox_bytes,
          deadLetterBytes: settings.dead_letter_bytes,
          streamSecrets: secrets,
        },
        log,
        (stream) => ((registry().get(stream)?.extra.webhooks as StreamWebhook[] | undefined) ?? []).filter((hook) => allowedHost(hook.url)),
      );
      // The margin covers the claim's round trip and recording the outcome: a node hands a claim
      // back unsent when less than a whole post's time is left of it (shared-outbox.ts).
      if (settings.cluster.lease_ms < settings.webhook_timeout_ms + LEASE_MARGIN_MS) {
        throw new ConfigError(`realtime.cluster.lease_ms (${settings.cluster.lease_ms}) must be at least realtime.webhook_timeout_ms (${settings.webhook_timeout_ms}) + ${LEASE_MARGIN_MS}: a delivery still being sent would be taken over by another node and sent twice.`);
      }
      const outbox = new SharedOutbox(
        webhooks,
        { collection: settings.cluster.outbox_collection, leaseMs: settings.cluster.lease_ms, pollMs: settings.cluster.poll_ms, keepDoneMs: settings.cluster.keep_done_seconds * 1000 },
        { maxAttempts: settings.webhook_max_attempts, maxAgeMs: settings.webhook_max_age_seconds * 1000, retryBaseMs: settings.webhook_retry_base_ms, timeoutMs: settings.webhook_timeout_ms },
        () => find(MONGODB_CHANGES)?.followedDatabases() ?? [],
        // A node without webhooks for database streams never polls the shared outbox.
        () => settings.webhooks.length > 0 || registry().list().some((d) => d.config.source.type === 'database' && ((d.extra.webhooks as unknown[] | undefined)?.length ?? 0) > 0),
        log,
      );
      const open = new Set<StreamSink>();
      const sessions = new Set<RealtimeSession>();
      // Read after the transport listens (`kernel.booted`), or at the first use if one comes
      // earlier; every use of the feed waits for it (history-load.ts).
      const history = new HistoryLoad(async () => {
        await feed.load();
        await webhooks.load();
        // `database` streams are followed once the history is read: a change read before that
        // is not in this node's feed, which then trusts its history only from the first change it saw.
        const changes = find(MONGODB_CHANGES);
        if (changes !== undefined && realtime.cluster !== undefined) {
          realtime.stopFollowing = changes.listen((change) => realtime.cluster!.handle(change));
          outbox.start();
        }
      }, log);
      // After the entries' preload (started in the same hook, before this one): both parse on
      // the event loop, and entries are what a client waits for first. A use of the feed that
      // comes earlier (a write) starts the read at once.
      hooks.on('kernel.booted', () => {
        void background('reading the change history', async () => {
          await find(SOURCES)?.whenLoaded();
          await history.start();
        });
      });
      realtime = { feed, webhooks, open, sessions, admission, outbox, history };
      provide(REALTIME, realtime);

      // Access rules on (issue #28): updates keep the version before, and one no client sees may still move an entry across a rule.
      const keepBefore = (config as unknown as Record<string, unknown>).access !== undefined;
      const cluster = { feed, changes: () => find(MONGODB_CHANGES), registry, entries: () => entriesService, keepBefore };
      const api = use(API);
      const checkOrigin = originCheck(config.api.cors.origins, (request) => api.baseUrl(request));
      const entriesService = use(ENTRIES);
      const entries = (): EntriesService => entriesService;
      const server = use(HTTP_SERVER);
      api.addEndpoint(
        changesEndpoint({
          feed,
          api,
          registry,
          entries,
          pageDefaults: config.api,
          heartbeatMs: settings.heartbeat_seconds * 1000,
          open,
          admission,
          limits: settings.limits,
          checkOrigin,
          logger: log,
          cluster,
          history,
        }),
      );
      api.addEndpoint({
        name: 'realtime.socket',
        method: 'GET',
        pattern: '/realtime',
        resource: 'entries',
        openapi: {
          summary: 'WebSocket subscriptions to the change feed (connect with Upgrade: websocket; see docs/realtime.md); a plain GET answers 426',
          responses: { '101': { description: 'Switching Protocols: the socket is open' } },
        },
        handler: async (request) => {
          if (!request.upgrade) {
            return api.errorReply(request, 426, 'This is a WebSocket endpoint: connect with "Upgrade: websocket" (docs/realtime.md).', [['Upgrade', 'websocket']]);
          }
          checkOrigin(request);
          await history.whenReady();
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(request.headers)) if (!UPGRADE_HEADERS.has(name)) headers[name] = value;
          const context = {
            feed,
            server,
            admission,
            limits: settings.limits,
            client: Admission.clientOf(request.locals, request.ip),
            requestId: request.id,
            prefix: request.api.prefix,
            headers,
            ip: request.ip,
            logger: log,
            cluster,
            onClose: (s: RealtimeSession) => sessions.delete(s),
          };
          return {
            status: 101,
            upgrade: (peer) => {
              const session = new RealtimeSession(peer, context);
              sessions.add(session);
              return session;
            },
          };
        },
      });

      // Every change, from the API or from a file edited on disk, enters the feed; webhooks
      // get theirs in the outbox (on disk) before the write is acknowledged (those of `database`
      // streams: in the shared outbox, once a node reads the change: shared-outbox.ts).
      // `database` streams with the mongodb plugin loaded: their feed is filled from the change
      // stream (cluster-changes.ts), every node alike; the hooks would give per-node cursors.
      let followed: FollowedChanges | undefined | null = null;
      const fromChangeStream = (definition: StreamDefinition): boolean => {
        if (definition.config.source.type !== 'database') return false;
        if (followed === null) followed = find(MONGODB_CHANGES);
        return followed !== undefined;
      };
      const publish = (event: ChangeEvent) => async (payload: EntryHookPayload) => {
        // Its seq follows the history's last: a write while the history is read waits for it
        // (writes resume in the order they came). When it could not be read the 503 thrown here
        // is logged for each write (hooks.ts): the write stands, its change and webhooks do not.
        if (!history.ready) await history.whenReady();
        const definition = registry().get(payload.stream);
        if (definition === undefined || fromChangeStream(definition)) return;
        const data = event === 'deleted' ? 'null' : entries().toJson(definition, payload.entry);
        // A write that changed nothing a client can see (a PATCH with the values it had) is no change.
        if (event === 'updated' && payload.original !== undefined && entries().toJson(definition, payload.original) === data) {
          if (!keepBefore || entries().versionOf(payload.original) === entries().versionOf(payload.entry)) return;
        }
        const match = event === 'deleted' ? (payload.original ?? payload.entry) : payload.entry;
        // Under access rules a move out of (into) a view is a delete (create) to that viewer: the version before tells.
        const before = keepBefore && event === 'updated' ? payload.original : undefined;
        const change = feed.publish(payload.stream, event, payload.key, data, match, before);
        // WebSocket subscribers of the whole stream, on uWS: one publish, fanned out natively.
        server.publish?.(topicOf(change.stream), socketMessage(change));
        await webhooks.enqueue(change);
      };
      realtime.cluster = new ClusterChanges({
        feed,
        registry,
        entries,
        server,
        outbox,
        keepBefore,
        logger: log,
        newRun: (stream, db) => void catchUpWebhooks(cluster, outbox, stream, db, log),
      });
      hooks.on('entry.created', publish('created'));
      hooks.on('entry.updated', publish('updated'));
      hooks.on('entry.deleted', publish('deleted'));
      hooks.on('definition.changed', ({ id, action }) => {
        if (action !== 'deleted') return;
        if (history.ready) feed.drop(id);
        else void history.start().then((read) => read && feed.drop(id));
      });
    },
    boot({ use }) {
      const { webhooks, history } = realtime;
      use(HTTP_SERVER).addReadinessCheck('realtime', () => history.report());
      use(HTTP_SERVER).addReadinessCheck('webhooks', () => ({ ready: true, details: webhooks.report() }));
    },
    async shutdown() {
      const { feed, webhooks, open, sessions, outbox, history } = realtime;
      // A read still running finishes first: the feed and the outbox are never closed under it;
      // one not started yet never starts.
      await history.close();
      realtime.stopFollowing?.();
      await outbox.close();
      for (const sink of [...open]) sink.end();
      for (const session of [...sessions]) session.close();
      await feed.close();
      await webhooks.close();
    },
  };
});
