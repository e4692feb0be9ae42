import type { Server } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { definePlugin, STORAGE_HEALTH } from '../../kernel/index.js';
import { API } from '../api/index.js';
import { HTTP_SERVER } from '../http/index.js';
import { REALTIME } from '../realtime/index.js';
import { SOURCES } from '../sources/index.js';
import { STREAM_REGISTRY } from '../streams/index.js';
import { createCollectors } from './collectors.js';
import { listenForScrapes, metricsReply } from './endpoint.js';
import { metricsSettings } from './settings.js';
import { METRICS } from './tokens.js';

/**
 * The metrics plugin (optional: `"plugins": ["metrics"]`): Prometheus series of requests
 * (from `request.handled`), entries, caches, realtime, webhooks, storage faults and the
 * boot, plus Node's process metrics, on one registry of its own (never prom-client's global
 * one, so two kernels in a process never mix their series). Served per `metrics.expose`.
 */
export const metricsPlugin = definePlugin(() => {
  let listener: Server | undefined;
  let registry: Registry;
  return {
    name: 'metrics',
    settings: metricsSettings,
    requires: ['http', 'api', 'streams', 'sources'],
    provides: [METRICS],
    // REALTIME is looked up with `find` when scraped, not declared: a declared use must have a
    // provider, and the realtime plugin may be left out (the kernel has no optional `uses`).
    uses: [STREAM_REGISTRY, SOURCES, HTTP_SERVER, API],
    register({ provide, use, find, config, hooks, logger }) {
      const settings = config.metrics;
      registry = new Registry();
      provide(METRICS, registry);
      if (settings.process_metrics) collectDefaultMetrics({ register: registry });
      const collectors = createCollectors(registry, settings.buckets, { streams: use(STREAM_REGISTRY), sources: use(SOURCES), realtime: () => find(REALTIME), logger, storage: use(STORAGE_HEALTH) });
      hooks.on('request.handled', (request) => collectors.observe(request));
      hooks.on('kernel.booted', () => collectors.bootSeconds.set(performance.now() / 1000));
      if (settings.expose === 'main') use(HTTP_SERVER).route('GET', settings.path, () => metricsReply(registry));
      else if (settings.expose === 'api') use(API).addEndpoint({ name: 'metrics', method: 'GET', pattern: '/metrics', handler: () => metricsReply(registry) });
    },
    async boot({ config, logger }) {
      const settings = config.metrics;
      if (settings.expose !== 'listener' || config.offline === true) return;
      listener = await listenForScrapes(registry, settings.host, settings.port, settings.path);
      const address = listener.address();
      const port = typeof address === 'object' && address !== null ? address.port : settings.port;
      logger.info({ url: `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}${settings.path}` }, 'metrics listening');
    },
    async shutdown() {
      await new Promise<void>((resolve) => (listener === undefined ? resolve() : listener.close(() => resolve())));
      listener = undefined;
    },
  };
});
