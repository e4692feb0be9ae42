// @ts-check
/**
 * streams-addon-geo: points on a map for Streams Kernel.
 *
 * - a `geopoint` field type (`{lat, lng}` or `"lat,lng"`, ranges validated);
 * - a `geo` definition key (`{"field": "location", "radius_km": 10, "precision": 6}`),
 *   checked so that `geo.field` names a geopoint field of the stream;
 * - a `near` method for the query endpoint, translated into where clauses any source runs;
 * - coordinates rounded to `geo.precision` decimals before each save (an entry hook).
 *
 * Written only against the public addon API, `streams-kernel/addon`.
 */
import { definePlugin, defineSettings, ENTRIES, FIELDS, STREAM_REGISTRY } from 'streams-kernel/addon';
import { geopointType } from './geopoint.js';
import { checkGeo, DEFAULT_PRECISION, GEO_KEY, geoSchema } from './geo-extension.js';
import { near } from './near.js';
import { roundingListener } from './rounding.js';


export { boundingBox, near, parseNear } from './near.js';
export { geopointType, isGeoPoint, normalizePoint } from './geopoint.js';
export { checkGeo, geoSchema } from './geo-extension.js';

/**
 * The addon's own top-level config section, owned exactly as a core plugin owns `http`:
 * `"geo": { "precision": 6 }` is the default of `geo.precision` for every stream. Its type
 * is declared in types.d.ts (ConfigSections), so `config.geo` is typed.
 */
export const geoConfigSettings = defineSettings({
  key: 'geo',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: { precision: { type: 'integer', minimum: 0, maximum: 10, default: DEFAULT_PRECISION } },
  },
});

export default definePlugin({
  name: 'geo',
  settings: geoConfigSettings,
  // The hook this addon emits (typed in types.d.ts): reported after the save, so `after`.
  emits: { 'geo.rounded': 'after' },
  // Registries these plugins bind in their own `register` step, so they run first.
  requires: ['streams', 'fields', 'entries'],
  // The services it uses (and provides: none), checked by the kernel before any `register`.
  provides: [],
  uses: [FIELDS, STREAM_REGISTRY, ENTRIES],
  // Everything here only registers: no files, no connections, so no `boot`/`shutdown`.
  register({ use, hooks, config }) {
    // Typed service references: `use` gives each service its type, no cast needed.
    const fields = use(FIELDS);
    const registry = use(STREAM_REGISTRY);
    const entries = use(ENTRIES);

    fields.registerType(geopointType);
    hooks.on('definition.extend', ({ extend }) => extend(GEO_KEY, geoSchema));
    registry.addCheck(checkGeo);
    entries.registerReadMethod('near', near);
    hooks.on('entry.saving', roundingListener(registry, hooks, config.geo.precision));
  },
});
