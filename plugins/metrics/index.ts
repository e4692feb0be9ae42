/** Public surface of the metrics plugin: `GET /metrics` in the Prometheus text format (optional core plugin). */
export { METRICS } from './tokens.js';
export { metricsPlugin as default } from './plugin.js';
export { metricsSettings, type MetricsSettings } from './settings.js';
