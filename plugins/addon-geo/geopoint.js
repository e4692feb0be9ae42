// @ts-check
/**
 * The `geopoint` field type: a point on Earth stored as `{ "lat": 48.8584, "lng": 2.2945 }`.
 *
 * Accepted input: that object (numbers, or numeric strings as forms send them), or a
 * `"lat,lng"` string. Arrays are refused on purpose: `[a, b]` is `[lat, lng]` for some
 * tools and `[lng, lat]` for GeoJSON, and guessing would silently swap points.
 */
import { BadRequestError } from 'streams-kernel/addon';

/** @typedef {import('streams-kernel/addon').FieldType} FieldType */
/** @typedef {{ lat: number, lng: number }} GeoPoint */

export const GEOPOINT = 'geopoint';

const NUMBER = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$/;
const PAIR = /^\s*([^,\s]+)\s*,\s*([^,\s]+)\s*$/;

/**
 * A number from a number or a numeric string; undefined for anything else.
 * @param {unknown} value
 * @returns {number | undefined}
 */
export function toNumber(value) {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && NUMBER.test(value)) return Number(value);
  return undefined;
}

/**
 * True for `{lat, lng}` with finite numbers in range and no other keys.
 * @param {unknown} value
 * @returns {value is GeoPoint}
 */
export function isGeoPoint(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 2 || !keys.includes('lat') || !keys.includes('lng')) return false;
  const { lat, lng } = /** @type {Record<string, unknown>} */ (value);
  return (
    typeof lat === 'number' && Number.isFinite(lat) && lat >= -90 && lat <= 90 &&
    typeof lng === 'number' && Number.isFinite(lng) && lng >= -180 && lng <= 180
  );
}

/**
 * An accepted lexical form to `{lat, lng}`; anything unrecognised is returned unchanged
 * so the schema rejects it with the type's message (input is validated, never coerced).
 * @param {unknown} value
 * @returns {unknown}
 */
export function normalizePoint(value) {
  if (typeof value === 'string') {
    const pair = PAIR.exec(value);
    if (!pair) return value;
    const lat = toNumber(pair[1]);
    const lng = toNumber(pair[2]);
    return lat === undefined || lng === undefined ? value : { lat, lng };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = /** @type {Record<string, unknown>} */ (value);
    if (Object.keys(record).length !== 2 || !Object.hasOwn(record, 'lat') || !Object.hasOwn(record, 'lng')) return value;
    const lat = toNumber(record.lat);
    const lng = toNumber(record.lng);
    return lat === undefined || lng === undefined ? value : { lat, lng };
  }
  return value;
}

/** @type {FieldType} */
export const geopointType = {
  name: GEOPOINT,
  // One check for the whole value, so a bad point gets this type's message on the
  // field itself (`location`), not a generic one on `location.lat`.
  schema: (_field, context) => ({ type: 'object', ...context.toolkit.predicate(isGeoPoint) }),
  normalize: (value) => normalizePoint(value),
  // A fresh object with exactly the two keys, whatever object came in.
  cast: (value) => {
    const point = /** @type {GeoPoint} */ (value);
    return { lat: point.lat, lng: point.lng };
  },
  serialize: (value) => (isGeoPoint(value) ? { lat: value.lat, lng: value.lng } : value),
  // `where[location]=48.85,2.29` compares whole points; a bad one is the client's mistake.
  castFilter: (value, field) => {
    const point = normalizePoint(value);
    if (!isGeoPoint(point)) {
      throw new BadRequestError(`The filter value for [${field.handle}] must be a point "lat,lng".`, { field: field.handle, rule: GEOPOINT });
    }
    return point;
  },
  rule: GEOPOINT,
  message: 'The :attribute must be a geographic point with a latitude between -90 and 90 and a longitude between -180 and 180.',
  // How the OpenAPI document (`/api/openapi.json`) describes a point: the answer's form.
  jsonSchema: () => ({
    type: 'object',
    required: ['lat', 'lng'],
    additionalProperties: false,
    properties: { lat: { type: 'number', minimum: -90, maximum: 90 }, lng: { type: 'number', minimum: -180, maximum: 180 } },
  }),
};
