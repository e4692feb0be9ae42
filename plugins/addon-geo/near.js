// @ts-check
/**
 * The `near` read method of the query endpoint:
 *
 *   {"parameters": [{"near": [48.8584, 2.2945, 5]}]}                 // the stream's geo.field
 *   {"parameters": [{"near": ["location", 48.8584, 2.2945, 5]}]}     // a named geopoint field
 *
 * It adds ordinary where clauses, `location.lat BETWEEN [s, n]` and `location.lng BETWEEN
 * [w, e]`, so every source runs it with its own engine (filebase in memory, MongoDB as
 * `$gte/$lte` on `location.lat`), combined with any other step of the query.
 *
 * It is a bounding box, not a circle: every entry within `km` matches, and so may entries
 * up to about 41% farther away (the box's corners are √2·km from the centre). Near a pole,
 * or when the box would cross the ±180° meridian, the longitude range widens to the whole
 * [-180, 180]: still every entry within `km`, but a whole latitude band of extra ones.
 */
import { BadRequestError } from 'streams-kernel/addon';
import { toNumber } from './geopoint.js';
import { geoSettings, isGeoField, MAX_RADIUS_KM } from './geo-extension.js';

/** @typedef {import('streams-kernel/addon').CriteriaReadMethod} CriteriaReadMethod */
/** @typedef {import('streams-kernel/addon').StreamDefinition} StreamDefinition */
/** @typedef {{ lat: [number, number], lng: [number, number] }} BoundingBox */

/** Mean Earth radius (IUGG), km. */
const EARTH_RADIUS_KM = 6371.0088;
/** Kilometres per degree of latitude (and of longitude at the equator). */
const KM_PER_DEGREE = (EARTH_RADIUS_KM * Math.PI) / 180;

/**
 * The box around a circle of `km` around (lat, lng), in degrees.
 * @param {number} lat
 * @param {number} lng
 * @param {number} km
 * @returns {BoundingBox}
 */
export function boundingBox(lat, lng, km) {
  const dLat = km / KM_PER_DEGREE;
  const south = lat - dLat;
  const north = lat + dLat;
  // The circle reaches a pole: every longitude is within km of it.
  if (south <= -90 || north >= 90) return { lat: [Math.max(-90, south), Math.min(90, north)], lng: [-180, 180] };
  // A parallel is shorter by cos(latitude); use the widest parallel the box touches.
  const widest = Math.max(Math.abs(south), Math.abs(north));
  const dLng = dLat / Math.cos((widest * Math.PI) / 180);
  const west = lng - dLng;
  const east = lng + dLng;
  // Crossing the anti-meridian would need two ranges (an OR), which would not combine
  // safely with the query's other steps: take every longitude instead (a superset).
  if (west < -180 || east > 180) return { lat: [south, north], lng: [-180, 180] };
  return { lat: [south, north], lng: [west, east] };
}

/**
 * @param {unknown} value
 * @param {string} what
 * @param {number} min
 * @param {number} max
 */
function coordinate(value, what, min, max) {
  const n = toNumber(value);
  if (n === undefined || n < min || n > max) {
    throw new BadRequestError(`near: ${what} must be a number from ${min} to ${max}, got ${JSON.stringify(value) ?? String(value)}.`, { rule: 'near' });
  }
  return n;
}

/**
 * The arguments of one `near` step, checked: 400 on anything wrong, before any clause is added.
 * @param {unknown[]} args
 * @param {StreamDefinition} stream
 * @returns {{ field: string, lat: number, lng: number, km: number }}
 */
export function parseNear(args, stream) {
  const named = typeof args[0] === 'string' && !/^\s*[-+.\d]/.test(args[0]);
  const rest = named ? args.slice(1) : args;
  const geo = geoSettings(stream);
  const field = named ? /** @type {string} */ (args[0]) : geo?.field;
  if (field === undefined) {
    throw new BadRequestError(`near: stream [${stream.id}] has no geo.field; name the field: {"near": ["<field>", lat, lng, km]}.`, { rule: 'near' });
  }
  if (!isGeoField(stream, field)) {
    throw new BadRequestError(`near: [${field.slice(0, 64)}] is not a geopoint field of stream [${stream.id}].`, { rule: 'near' });
  }
  if (rest.length < 2 || rest.length > 3) {
    throw new BadRequestError('near takes [lat, lng, km] or ["<field>", lat, lng, km].', { rule: 'near' });
  }
  const lat = coordinate(rest[0], 'the latitude', -90, 90);
  const lng = coordinate(rest[1], 'the longitude', -180, 180);
  const radius = rest[2] ?? geo?.radius_km;
  if (radius === undefined) {
    throw new BadRequestError(`near: give a distance in km (stream [${stream.id}] has no geo.radius_km).`, { rule: 'near' });
  }
  const km = coordinate(radius, 'the distance in km', 0, MAX_RADIUS_KM);
  if (km === 0) throw new BadRequestError('near: the distance in km must be greater than 0.', { rule: 'near' });
  return { field, lat, lng, km };
}

/** @type {CriteriaReadMethod} */
export const near = (criteria, args, { stream }) => {
  const { field, lat, lng, km } = parseNear(args, stream);
  const box = boundingBox(lat, lng, km);
  criteria.where(`${field}.lat`, 'BETWEEN', box.lat);
  // A full longitude range still needs a stored longitude, like the narrow one.
  criteria.where(`${field}.lng`, 'BETWEEN', box.lng);
};
