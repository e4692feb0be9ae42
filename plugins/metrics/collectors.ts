import { Counter, Gauge, type Registry } from 'prom-client';
import { cacheStatistics, type Logger, type StorageHealth } from '../../kernel/index.js';
import type { RequestHookPayload } from '../http/index.js';
import type { SourceRegistry } from '../sources/index.js';
import type { StreamRegistry } from '../streams/index.js';
import type { Realtime } from '../realtime/index.js';
import { RequestSeries } from './request-series.js';

/**
 * The product's series, on one prom-client registry. Request series are fed by the
 * `request.handled` hook (labelled by the route template, never the URL; request-series.ts);
 * everything else
 * is read from the other plugins' services when Prometheus scrapes (`collect`), so the
 * request path pays for one counter and one histogram observation and nothing more.
 */
export interface Collectors {
  observe(request: RequestHookPayload): void;
  bootSeconds: Gauge;
}

export interface CollectorSources {
  streams: StreamRegistry;
  sources: SourceRegistry;
  /** Looked up at scrape time: the realtime plugin may be switched off. */
  realtime: () => Realtime | undefined;
  logger: Logger;
  /** This kernel's storage health (its write faults). */
  storage: StorageHealth;
}

/** The label of a request that matched no route: one series for every unknown URL. */
const UNMATCHED = '(unmatched)';

export function createCollectors(registry: Registry, buckets: number[], from: CollectorSources): Collectors {
  const requests = new RequestSeries([...buckets].sort((a, b) => a - b));
  requests.register(registry);
  const bootSeconds = new Gauge({ name: 'streams_boot_duration_seconds', help: 'Seconds from the process start until every plugin had booted.', registers: [registry] });

  new Gauge({
    name: 'streams_entries',
    help: 'Entries per stream, counted when scraped (a stream whose count fails is left out and logged at debug).',
    labelNames: ['stream'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const definition of from.streams.list()) {
        try {
          this.set({ stream: definition.id }, await from.sources.for(definition).count([]));
        } catch (error) {
          from.logger.debug({ err: error, stream: definition.id }, 'metrics: entries not counted');
        }
      }
    },
  });
  const hits = new Counter({ name: 'streams_cache_hits_total', help: 'Reads answered by an in-memory cache, per cache.', labelNames: ['cache'], registers: [registry] });
  const misses = new Counter({ name: 'streams_cache_misses_total', help: 'Reads an in-memory cache could not answer, per cache.', labelNames: ['cache'], registers: [registry] });
  const cacheCollect = (counter: Counter, pick: 'hits' | 'misses') => () => {
    counter.reset();
    for (const [name, stats] of cacheStatistics()) counter.inc({ cache: name }, stats[pick]);
  };
  // prom-client calls a metric's collect before reading it; counters read absolute process totals here.
  (hits as unknown as { collect: () => void }).collect = cacheCollect(hits, 'hits');
  (misses as unknown as { collect: () => void }).collect = cacheCollect(misses, 'misses');

  const faults = new Counter({ name: 'streams_storage_faults_total', help: 'Writes refused because the storage failed (disk full, read-only, I/O error).', registers: [registry] });
  (faults as unknown as { collect: () => void }).collect = () => {
    faults.reset();
    faults.inc(from.storage.faults());
  };

  const realtimeGauge = (name: string, help: string, read: (realtime: Realtime) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const realtime = from.realtime();
        this.set(realtime === undefined ? 0 : read(realtime));
      },
    });
  };
  realtimeGauge('streams_realtime_subscribers', 'Listeners of the change feed (event streams and socket subscriptions).', (r) => r.feed.subscribers);
  realtimeGauge('streams_realtime_history_bytes', 'Bytes of change history on disk.', (r) => r.feed.report().bytes);
  realtimeGauge('streams_webhook_outbox_pending', 'Webhook deliveries waiting in the outbox.', (r) => Number(r.webhooks.report().pending ?? 0));
  realtimeGauge('streams_webhook_failing_endpoints', 'Webhook endpoints whose last delivery failed.', (r) => ((r.webhooks.report().failing as unknown[] | undefined) ?? []).length);
  realtimeGauge('streams_webhook_consecutive_failures', 'Failed delivery attempts in a row, summed over the failing webhook endpoints.', (r) =>
    ((r.webhooks.report().failing as Array<{ failures: number }> | undefined) ?? []).reduce((sum, h) => sum + h.failures, 0),
  );

  return {
    bootSeconds,
    observe(request) {
      requests.observe(request.method, request.route === '' ? UNMATCHED : request.route, request.status, request.durationMs / 1000);
    },
  };
}
