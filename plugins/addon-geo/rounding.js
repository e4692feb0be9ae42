// @ts-check
/**
 * An `entry.saving` listener: coordinates of every geopoint field are stored with
 * `geo.precision` decimals (default 6, about 11 cm). GPS noise below that is not
 * information, and rounded values make equality filters and diffs predictable.
 *
 * `*ing` listeners run before anything is written and may change `payload.entry`
 * (throwing would veto the write). The nested point objects may be shared with the
 * stored entry (PATCH), so they are replaced, never mutated.
 */
import { GEOPOINT, isGeoPoint } from './geopoint.js';
import { DEFAULT_PRECISION, geoSettings } from './geo-extension.js';

/** @typedef {import('streams-kernel/addon').StreamRegistry} StreamRegistry */
/** @typedef {import('streams-kernel/addon').Hooks} Hooks */
/** @typedef {import('streams-kernel/addon').HookListener<'entry.saving'>} SavingListener */

/**
 * @param {number} value
 * @param {number} decimals
 */
export function round(value, decimals) {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

/**
 * @param {StreamRegistry} registry
 * @param {Hooks} hooks the addon's own hook `geo.rounded` is emitted on it
 * @param {number} [precision] the app-wide default (the `geo` config section)
 * @returns {SavingListener}
 */
export function roundingListener(registry, hooks, precision = DEFAULT_PRECISION) {
  return async (payload) => {
    const stream = registry.get(payload.stream);
    if (!stream) return;
    const decimals = geoSettings(stream)?.precision ?? precision;
    for (const field of stream.fields) {
      if (field.type !== GEOPOINT) continue;
      const value = payload.entry[field.handle];
      if (!isGeoPoint(value)) continue;
      const stored = { lat: round(value.lat, decimals), lng: round(value.lng, decimals) };
      payload.entry[field.handle] = stored;
      if (stored.lat !== value.lat || stored.lng !== value.lng) {
        await hooks.emit('geo.rounded', { stream: stream.id, field: field.handle, sent: { lat: value.lat, lng: value.lng }, stored });
      }
    }
  };
}
