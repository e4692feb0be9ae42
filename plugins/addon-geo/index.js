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
import { definePlugin, ENTRIES, FIELDS, STREAM_REGISTRY } from 'streams-kernel/addon';
import { geopointType } from './geopoint.js';
import { checkGeo, GEO_KEY, geoSchema } from './geo-extension.js';
import { near } from './near.js';
import { roundingListener } from './rounding.js';

/** @typedef {import('streams-kernel/addon').FieldsService} FieldsService */
/** @typedef {import('streams-kernel/addon').StreamRegistry} StreamRegistry */
/** @typedef {import('streams-kernel/addon').EntriesService} EntriesService */

export { boundingBox, near, parseNear } from './near.js';
export { geopointType, isGeoPoint, normalizePoint } from './geopoint.js';
export { checkGeo, geoSchema } from './geo-extension.js';

export default definePlugin({
  name: 'geo',
  // Registries these plugins bind in their own `register` step, so they run first.
  requires: ['streams', 'fields', 'entries'],
  // Everything here only registers: no files, no connections, so no `boot`/`shutdown`.
  register({ container, hooks }) {
    // Tokens are plain symbols: say which service each one resolves to.
    const fields = /** @type {FieldsService} */ (container.resolve(FIELDS));
    const registry = /** @type {StreamRegistry} */ (container.resolve(STREAM_REGISTRY));
    const entries = /** @type {EntriesService} */ (container.resolve(ENTRIES));

    fields.registerType(geopointType);
    hooks.on('definition.extend', ({ extend }) => extend(GEO_KEY, geoSchema));
    registry.addCheck(checkGeo);
    entries.registerReadMethod('near', near);
    hooks.on('entry.saving', roundingListener(registry));
  },
});
