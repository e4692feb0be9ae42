/**
 * The geo addon's `near` method off the HTTP path: the bounding box contains the whole
 * circle (poles and the anti-meridian included), and the where clauses it adds translate
 * to the expected MongoDB filter, which selects (via mingo) exactly what the in-memory
 * reference engine (filebase, file, self) selects.
 *
 * The addon itself only imports `streams-kernel/addon`; this test reaches into the repo
 * for the entries criteria builder and the MongoDB translation (`buildFilter`).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Query } from 'mingo';
import { BSON, type Document } from 'mongodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CriteriaReadMethod, StreamDefinition } from '../../plugins/addon/index.js';
import { QueryCriteria } from '../../plugins/entries/criteria-builder.js';
import { buildFilter } from '../../plugins/mongodb/criteria.js';
import { matchesWhere, normalizeWhere, type Entry, type WhereClause } from '../../plugins/sources/index.js';
import { GEO_ADDON_DIR, linkKernelForAddon } from '../helpers/addon-link.js';

const addonDir = GEO_ADDON_DIR;

interface Box {
  lat: [number, number];
  lng: [number, number];
}
interface GeoModule {
  near: CriteriaReadMethod;
  boundingBox(lat: number, lng: number, km: number): Box;
}

let geo: GeoModule;
beforeAll(async () => {
  linkKernelForAddon();
  geo = (await import(pathToFileURL(path.join(addonDir, 'index.js')).href)) as GeoModule;
});

const EARTH_RADIUS_KM = 6371.0088;
const rad = (deg: number): number => (deg * Math.PI) / 180;
const deg = (r: number): number => (r * 180) / Math.PI;

/** The point `km` away from (lat, lng) in direction `bearing` (degrees), on a sphere. */
function destination(lat: number, lng: number, km: number, bearing: number): { lat: number; lng: number } {
  const d = km / EARTH_RADIUS_KM;
  const φ1 = rad(lat);
  const θ = rad(bearing);
  const φ2 = Math.asin(Math.sin(φ1) * Math.cos(d) + Math.cos(φ1) * Math.sin(d) * Math.cos(θ));
  const λ2 = rad(lng) + Math.atan2(Math.sin(θ) * Math.sin(d) * Math.cos(φ1), Math.cos(d) - Math.sin(φ1) * Math.sin(φ2));
  return { lat: deg(φ2), lng: ((deg(λ2) + 540) % 360) - 180 };
}

const inBox = (box: Box, p: { lat: number; lng: number }): boolean =>
  p.lat >= box.lat[0] && p.lat <= box.lat[1] && p.lng >= box.lng[0] && p.lng <= box.lng[1];

describe('near: the bounding box', () => {
  const centres: Array<[number, number, number]> = [
    [48.8584, 2.2945, 5],
    [0, 0, 100],
    [-33.86, 151.21, 50],
    [64.1, -21.9, 300], // high latitude: the box widens in longitude
    [89.5, 10, 100], // reaches the pole: every longitude
    [-89.9, 0, 20],
    [10, 179.9, 50], // crosses the anti-meridian: every longitude
    [10, -179.95, 20],
  ];

  it('holds every point of the circle (a superset), on every bearing', () => {
    for (const [lat, lng, km] of centres) {
      const box = geo.boundingBox(lat, lng, km);
      for (let bearing = 0; bearing < 360; bearing += 5) {
        const edge = destination(lat, lng, km * 0.999, bearing);
        expect(inBox(box, edge), `${lat},${lng},${km} bearing ${bearing}`).toBe(true);
      }
    }
  });

  it('is tight away from poles and the anti-meridian, and widens to every longitude otherwise', () => {
    const paris = geo.boundingBox(48.8584, 2.2945, 5);
    expect(paris.lat[1] - paris.lat[0]).toBeCloseTo((2 * 5) / 111.195, 3);
    expect(paris.lng[1] - paris.lng[0]).toBeLessThan(0.15);
    expect(geo.boundingBox(89.5, 10, 100).lng).toEqual([-180, 180]);
    expect(geo.boundingBox(89.5, 10, 100).lat[1]).toBe(90);
    expect(geo.boundingBox(10, 179.9, 50).lng).toEqual([-180, 180]);
    // A point just across the anti-meridian is found.
    expect(inBox(geo.boundingBox(10, 179.9, 50), { lat: 10, lng: -179.9 })).toBe(true);
  });
});

const places: StreamDefinition = {
  id: 'places',
  name: 'Places',
  config: { key_name: 'id', source: { type: 'database' } },
  fields: [
    { handle: 'id', type: 'integer', required: false, unique: false, protected: false, rules: [], config: {} },
    { handle: 'location', type: 'geopoint', required: false, unique: false, protected: false, rules: [], config: {} },
  ],
  rules: {},
  routes: [],
  extra: { geo: { field: 'location', radius_km: 10 } },
  raw: {},
};

/** The clauses one query with these steps gives the source, as the entries service builds them. */
function clausesOf(steps: Array<[string, unknown[]]>): WhereClause[] {
  const criteria = new QueryCriteria();
  for (const [method, args] of steps) {
    if (method === 'near') geo.near(criteria, args, { stream: places });
    else if (method === 'where') criteria.where(...(args as [unknown, unknown, unknown]));
  }
  return criteria.wheres.map((w) => normalizeWhere(w.field, w.operator, w.value, w.boolean));
}

/** As the driver sends it: BSON-serialized and back, undefined kept as null. */
const wire = <T extends Document>(value: T): T => BSON.deserialize(BSON.serialize(value, { ignoreUndefined: false })) as T;

describe('near on MongoDB', () => {
  it('translates to $gte/$lte on location.lat and location.lng, guarded against arrays', () => {
    const where = clausesOf([['near', [48.8584, 2.2945, 5]]]);
    const box = geo.boundingBox(48.8584, 2.2945, 5);
    expect(where).toEqual([
      { boolean: 'and', field: 'location.lat', operator: 'BETWEEN', value: box.lat },
      { boolean: 'and', field: 'location.lng', operator: 'BETWEEN', value: box.lng },
    ]);
    const notArray = { $not: { $type: 'array' } };
    expect(buildFilter(where, 'id')).toEqual({
      $and: [
        { $and: [{ location: notArray }, { 'location.lat': { $gte: box.lat[0], $lte: box.lat[1], ...notArray } }] },
        { $and: [{ location: notArray }, { 'location.lng': { $gte: box.lng[0], $lte: box.lng[1], ...notArray } }] },
      ],
    });
  });

  it('selects exactly the entries the in-memory reference selects', () => {
    const entries: Entry[] = [
      { id: 1, location: { lat: 48.8584, lng: 2.2945 } },
      { id: 2, location: { lat: 48.8606, lng: 2.3376 } },
      { id: 3, location: { lat: 48.8049, lng: 2.1204 } },
      { id: 4, location: { lat: 51.5033, lng: -0.1196 } },
      { id: 5, location: null },
      { id: 6 },
      { id: 7, location: [{ lat: 48.8584, lng: 2.2945 }] },
      { id: 8, location: { lat: '48.8584', lng: '2.2945' } },
      { id: 9, location: { lat: 48.8584 } },
      { id: 10, location: { lat: 10, lng: -179.95 } },
      { id: 11, location: { lat: 10.1, lng: 179.99 } },
      { id: 12, location: { lat: 89.9, lng: -120 } },
    ];
    const queries: Array<Array<[string, unknown[]]>> = [
      [['near', [48.8584, 2.2945, 5]]],
      [['near', [48.8584, 2.2945]]],
      [['near', ['location', 48.8584, 2.2945, 500]]],
      [['near', [48.8584, 2.2945, 20]], ['where', ['id', '!=', 2]]],
      [['near', [10, 179.9, 50]]],
      [['near', [89.5, 0, 100]]],
    ];
    const expected = [[1, 2], [1, 2], [1, 2, 3, 4], [1, 3], [10, 11], [12]];
    queries.forEach((steps, index) => {
      const where = clausesOf(steps);
      const reference = entries.filter((e) => matchesWhere(where, e)).map((e) => e.id);
      const filter = new Query(wire(buildFilter(where, 'id')));
      const mongo = entries.filter((e) => filter.test(wire({ ...e, _id: e.id }))).map((e) => e.id);
      expect(reference, JSON.stringify(steps)).toEqual(expected[index]);
      expect(mongo, JSON.stringify(steps)).toEqual(reference);
    });
  });
});
