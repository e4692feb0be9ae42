/**
 * Names of the plugins that ship with the product, mapped to their module (relative to
 * this file, so it works from `dist/` and under vitest alike). The kernel treats them
 * like any addon; this table only spares the config from spelling out paths.
 */
export const CORE_PLUGINS: Record<string, string> = {
  streams: '../plugins/streams/index.js',
  fields: '../plugins/fields/index.js',
  sources: '../plugins/sources/index.js',
  entries: '../plugins/entries/index.js',
  http: '../plugins/http/index.js',
  api: '../plugins/api/index.js',
  'stream-routes': '../plugins/stream-routes/index.js',
  openapi: '../plugins/openapi/index.js',
  realtime: '../plugins/realtime/index.js',
  'control-panel': '../plugins/control-panel/index.js',
  mongodb: '../plugins/mongodb/index.js',
  metrics: '../plugins/metrics/index.js',
  access: '../plugins/access/index.js',
};

/**
 * Loaded on every boot, whatever the config lists. Optional core plugins (mongodb, metrics) load when listed;
 * `access` also loads when the config has an `access` section (issue #28: off unless configured).
 */
export const DEFAULT_PLUGINS = ['streams', 'fields', 'sources', 'entries', 'http', 'api', 'stream-routes', 'openapi', 'realtime', 'control-panel'];
