// @ts-check
/**
 * The `geo` definition key: which geopoint field `near` searches by default, the default
 * radius, and how many decimals stored coordinates keep.
 *
 *   "geo": { "field": "location", "radius_km": 10, "precision": 6 }
 */
import { fieldOf } from 'streams-kernel/addon';
import { GEOPOINT } from './geopoint.js';

/** @typedef {import('streams-kernel/addon').DefinitionCheck} DefinitionCheck */
/** @typedef {import('streams-kernel/addon').StreamDefinition} StreamDefinition */
/** @typedef {{ field: string, radius_km?: number, precision?: number }} GeoSettings */

export const GEO_KEY = 'geo';

/** Half the Earth's circumference: no two points are farther apart. */
export const MAX_RADIUS_KM = 20_016;

/** Coordinates keep 6 decimals (about 11 cm) unless the definition says otherwise. */
export const DEFAULT_PRECISION = 6;

/** JSON Schema of the key, declared through the `definition.extend` hook. */
export const geoSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['field'],
  properties: {
    field: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    radius_km: { type: 'number', exclusiveMinimum: 0, maximum: MAX_RADIUS_KM },
    precision: { type: 'integer', minimum: 0, maximum: 10 },
  },
};

/**
 * The stream's `geo` settings (already validated by the schema), or undefined.
 * @param {StreamDefinition} stream
 * @returns {GeoSettings | undefined}
 */
export function geoSettings(stream) {
  const value = stream.extra[GEO_KEY];
  return value && typeof value === 'object' ? /** @type {GeoSettings} */ (value) : undefined;
}

/**
 * True when `handle` is a geopoint field of `stream`.
 * @param {StreamDefinition} stream
 * @param {string} handle
 */
export function isGeoField(stream, handle) {
  return fieldOf(stream, handle)?.type === GEOPOINT;
}

/**
 * A definition check (schema says the shape, this says the meaning): `geo.field` must
 * name a geopoint field of the same stream. A problem fails boot naming file and path,
 * or answers 409 on the stream endpoints.
 * @type {DefinitionCheck}
 */
export const checkGeo = (definition) => {
  const geo = geoSettings(definition);
  if (!geo || isGeoField(definition, geo.field)) return [];
  const field = fieldOf(definition, geo.field);
  return [
    {
      path: `/${GEO_KEY}/field`,
      message: field
        ? `names [${geo.field}], a field of type [${field.type}]; it must be a ${GEOPOINT} field`
        : `names [${geo.field}], which is not a field of stream [${definition.id}]`,
    },
  ];
};
