import { defineSettings } from '../../kernel/index.js';

/** The `metrics` section (docs/configuration.md, "metrics"; docs/operations.md, "Metrics"). */
export interface MetricsSettings {
  /** Where `GET /metrics` is served: `main` (the server's own port, no middleware), `listener` (its own address) or `api` (an API endpoint behind each interface's middleware and gate). */
  expose: 'main' | 'listener' | 'api';
  /** The path on `main` and `listener`; under `api` it is `<interface prefix>/metrics`. */
  path: string;
  /** The own listener's address (`expose: "listener"`): keep it on a private interface. */
  host: string;
  port: number;
  /** Upper bounds (seconds) of `http_request_duration_seconds`. */
  buckets: number[];
  /** Node's own process metrics (event-loop lag, heap, GC, file descriptors). */
  process_metrics: boolean;
}

declare module '../../kernel/config-schema.js' {
  interface ConfigSections {
    metrics: MetricsSettings;
  }
}

export const metricsSettings = defineSettings({
  key: 'metrics',
  schema: {
    type: 'object',
    additionalProperties: false,
    default: {},
    properties: {
      expose: { enum: ['main', 'listener', 'api'], default: 'main' },
      path: { type: 'string', pattern: '^/[A-Za-z0-9_.~/-]*$', default: '/metrics' },
      host: { type: 'string', minLength: 1, default: '127.0.0.1' },
      port: { type: 'integer', minimum: 0, maximum: 65535, default: 9464 },
      buckets: { type: 'array', minItems: 1, items: { type: 'number', exclusiveMinimum: 0 }, default: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
      process_metrics: { type: 'boolean', default: true },
    },
  },
});
