import type { Registry } from 'prom-client';

/** What one (route, method) pair has seen: a status tally and the duration histogram. */
interface RouteRecord {
  statuses: Map<number, number>;
  /** Observations at or under each bound (not cumulative: summed when scraped). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, counted in plain maps and typed
 * arrays and turned into prom-client values only when scraped. prom-client's own
 * `inc(labels)`/`observe(labels)` hash the label object on every call (a sorted key string,
 * about a microsecond); here a request costs two Map lookups on strings the router already
 * holds (route templates and method literals), one tally and one bucket increment: the
 * request path stays within the 3% budget of GET one (issue #32).
 */
export class RequestSeries {
  private readonly routes = new Map<string, Map<string, RouteRecord>>();

  constructor(private readonly bounds: number[]) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.routes.get(route);
    if (byMethod === undefined) this.routes.set(route, (byMethod = new Map()));
    let record = byMethod.get(method);
    if (record === undefined) byMethod.set(method, (record = { statuses: new Map(), buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    record.statuses.set(status, (record.statuses.get(status) ?? 0) + 1);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        record.buckets[i]!++;
        break;
      }
    }
    record.sum += seconds;
    record.count++;
  }

  /** Both series on `registry`, as prom-client metric objects (it formats and escapes them). */
  register(registry: Registry): void {
    const requests = { name: 'http_requests_total', help: 'HTTP requests answered, by method, route template and status.', type: 'counter', aggregator: 'sum' };
    const duration = { name: 'http_request_duration_seconds', help: "Time from a request's head to its reply, by method and route template.", type: 'histogram', aggregator: 'sum' };
    const metric = (base: typeof requests, values: () => MetricValue[]) => ({ ...base, get: async () => ({ ...base, values: values() }), reset: () => undefined });
    registry.registerMetric(metric(requests, () => this.counts()) as never);
    registry.registerMetric(metric(duration, () => this.histograms()) as never);
  }

  private counts(): MetricValue[] {
    const values: MetricValue[] = [];
    for (const [route, byMethod] of this.routes) {
      for (const [method, record] of byMethod) {
        for (const [status, count] of record.statuses) values.push({ value: count, labels: { method, route, status } });
      }
    }
    return values;
  }

  private histograms(): MetricValue[] {
    const values: MetricValue[] = [];
    const name = 'http_request_duration_seconds';
    for (const [route, byMethod] of this.routes) {
      for (const [method, record] of byMethod) {
        let cumulative = 0;
        for (let i = 0; i < this.bounds.length; i++) {
          cumulative += record.buckets[i]!;
          values.push({ value: cumulative, labels: { le: this.bounds[i]!, method, route }, metricName: `${name}_bucket` });
        }
        values.push({ value: record.count, labels: { le: '+Inf', method, route }, metricName: `${name}_bucket` });
        values.push({ value: record.sum, labels: { method, route }, metricName: `${name}_sum` });
        values.push({ value: record.count, labels: { method, route }, metricName: `${name}_count` });
      }
    }
    return values;
  }
}
