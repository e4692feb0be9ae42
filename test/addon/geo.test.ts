import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '../../kernel/index.js';
import { GEO_ADDON_DIR, linkKernelForAddon } from '../helpers/addon-link.js';
import { startApp, type StartAppOptions, type TestApp } from '../helpers/app.js';

/**
 * The example addon (plugins/addon-geo) loaded BY PATH from the config, as an author
 * develops it: in-process through the real kernel, over real HTTP. It resolves
 * `streams-kernel/addon` through a link to this repository (test/helpers/addon-link.ts).
 * That second copy of the kernel modules is fine: tokens are `Symbol.for` globals and
 * AppErrors are recognised by a global brand.
 */
const addonDir = GEO_ADDON_DIR;

const EIFFEL = { lat: 48.8584, lng: 2.2945 };
const places = {
  name: 'Places',
  geo: { field: 'location', radius_km: 20 },
  fields: { id: 'integer', name: { type: 'string', required: true }, location: { type: 'geopoint', required: true } },
};
const data = {
  places: [
    { id: 1, name: 'Eiffel Tower', location: EIFFEL },
    { id: 2, name: 'Louvre', location: { lat: 48.8606, lng: 2.3376 } }, // ~3.2 km from the tower
    { id: 3, name: 'Versailles', location: { lat: 48.8049, lng: 2.1204 } }, // ~14 km
    { id: 4, name: 'London Eye', location: { lat: 51.5033, lng: -0.1196 } }, // ~340 km
  ],
};

let app: TestApp | undefined;
beforeAll(() => linkKernelForAddon());
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function boot(options: StartAppOptions = {}): Promise<TestApp> {
  app = await startApp({ streams: { places }, data, ...options, config: { plugins: [addonDir], ...(options.config ?? {}) } });
  return app;
}

/** The boot error of an app that must not start (closing it if it did). */
async function bootError(options: StartAppOptions): Promise<Error | undefined> {
  return boot(options).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
}

async function names(res: { json: { data: Array<{ name: string }> } }): Promise<string[]> {
  return res.json.data.map((e) => e.name).sort();
}

describe('geopoint field type', () => {
  it('stores an object or a "lat,lng" string as {lat, lng}, rounded to 6 decimals', async () => {
    await boot();
    const fromObject = await app!.request('POST', '/api/streams/places/entries', { name: 'Notre-Dame', location: { lat: 48.85296819, lng: 2.3499021 } });
    expect(fromObject.status).toBe(201);
    expect(fromObject.json.data.location).toEqual({ lat: 48.852968, lng: 2.349902 });

    const fromString = await app!.request('POST', '/api/streams/places/entries', { name: 'Sacré-Cœur', location: ' 48.8867, 2.3431 ' });
    expect(fromString.status).toBe(201);
    expect(fromString.json.data.location).toEqual({ lat: 48.8867, lng: 2.3431 });

    // A form sends strings: location[lat]=...&location[lng]=...
    const fromForm = await app!.request('POST', '/api/streams/places/entries', 'name=Pantheon&location[lat]=48.8462&location[lng]=2.3464', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(fromForm.status).toBe(201);
    expect(fromForm.json.data.location).toEqual({ lat: 48.8462, lng: 2.3464 });

    const stored = await app!.request('GET', `/api/streams/places/entries/${fromString.json.data.id}`);
    expect(stored.json.data.location).toEqual({ lat: 48.8867, lng: 2.3431 });
  });

  it('answers 409 with the type message for points out of range or not points, and writes nothing', async () => {
    await boot();
    const bad: unknown[] = [{ lat: 91, lng: 0 }, { lat: 0, lng: -180.5 }, '48.8,', 'north', [48.8, 2.3], { lat: 1, lng: 2, alt: 3 }, { lat: '1x', lng: 2 }, 42];
    for (const location of bad) {
      const res = await app!.request('POST', '/api/streams/places/entries', { name: 'Nowhere', location });
      expect(res.status, JSON.stringify(location)).toBe(409);
      expect(res.json.errors).toEqual([
        {
          message: 'The location must be a geographic point with a latitude between -90 and 90 and a longitude between -180 and 180.',
          meta: { field: 'location', rule: 'geopoint' },
        },
      ]);
    }
    const patch = await app!.request('PATCH', '/api/streams/places/entries/1', { location: '95,2' });
    expect(patch.status).toBe(409);
    const list = await app!.request('GET', '/api/streams/places/entries');
    expect(list.json.meta.total).toBe(4);
    expect((await app!.request('GET', '/api/streams/places/entries/1')).json.data.location).toEqual(EIFFEL);
  });

  it('describes itself in the OpenAPI document through the field-type contract (jsonSchema)', async () => {
    await boot();
    const doc = await app!.request('GET', '/api/openapi.json');
    expect(doc.json.components.schemas['places.Entry'].properties.location).toMatchObject({ type: 'object', required: ['lat', 'lng'] });
  });

  it('filters by a whole point, and a bad filter point is a 400', async () => {
    await boot();
    const hit = await app!.request('GET', '/api/streams/places/entries?where[location]=48.8584,2.2945');
    expect(hit.status).toBe(200);
    expect(await names(hit)).toEqual(['Eiffel Tower']);
    expect((await app!.request('GET', '/api/streams/places/entries?where[location]=here')).status).toBe(400);
  });
});

describe('near on the query endpoint', () => {
  const query = (parameters: unknown[]) => app!.request('POST', '/api/streams/places/query', { parameters });

  it('finds the entries around a point, with the distance given or the stream default', async () => {
    await boot();
    const five = await query([{ near: [EIFFEL.lat, EIFFEL.lng, 5] }]);
    expect(five.status).toBe(200);
    expect(await names(five)).toEqual(['Eiffel Tower', 'Louvre']);
    expect(five.json.meta.total).toBe(2);

    // geo.radius_km (20) when no distance is given.
    expect(await names(await query([{ near: [EIFFEL.lat, EIFFEL.lng] }]))).toEqual(['Eiffel Tower', 'Louvre', 'Versailles']);
    // Numeric strings (form bodies) are numbers too.
    expect(await names(await query([{ near: ['48.8584', '2.2945', '1'] }]))).toEqual(['Eiffel Tower']);
    expect(await names(await query([{ near: [EIFFEL.lat, EIFFEL.lng, 500] }]))).toHaveLength(4);
  });

  it('names the field explicitly and combines with the other steps', async () => {
    await boot();
    const res = await query([{ near: ['location', EIFFEL.lat, EIFFEL.lng, 20] }, { where: ['name', '!=', 'Louvre'] }, { orderBy: ['name', 'desc'] }]);
    expect(res.status).toBe(200);
    expect(res.json.data.map((e: { name: string }) => e.name)).toEqual(['Versailles', 'Eiffel Tower']);
  });

  it('works on a stream without a geo key when the field is named', async () => {
    const spots = { fields: { id: 'integer', name: 'string', at: 'geopoint' } };
    await boot({ streams: { spots }, data: { spots: [{ id: 1, name: 'Tower', at: EIFFEL }] } });
    const res = await app!.request('POST', '/api/streams/spots/query', { parameters: [{ near: ['at', 48.86, 2.29, 1] }] });
    expect(await names(res)).toEqual(['Tower']);
    const unnamed = await app!.request('POST', '/api/streams/spots/query', { parameters: [{ near: [48.86, 2.29, 1] }] });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json.errors[0].message).toMatch(/no geo\.field/);
  });

  it('answers 400 on bad arguments', async () => {
    await boot({ streams: { places: { ...places, geo: { field: 'location' } } } });
    const cases: Array<[unknown[], RegExp]> = [
      [[100, 2, 5], /latitude must be a number from -90 to 90/],
      [[48, -181, 5], /longitude must be a number from -180 to 180/],
      [[48, 'east', 5], /longitude/],
      [[48, 2, -1], /distance in km/],
      [[48, 2, 0], /greater than 0/],
      [[48, 2, 'far'], /distance in km/],
      [[48, 2], /give a distance in km/],
      [[48], /near takes/],
      [[48, 2, 5, 6], /near takes/],
      [['name', 48, 2, 5], /\[name\] is not a geopoint field/],
      [['__proto__', 48, 2, 5], /is not a geopoint field/],
      [[null, 2, 5], /latitude/],
    ];
    for (const [args, message] of cases) {
      const res = await query([{ near: args }]);
      expect(res.status, JSON.stringify(args)).toBe(400);
      expect(res.json.errors[0].message, JSON.stringify(args)).toMatch(message);
    }
  });
});

describe('the geo definition key', () => {
  it('rejects a value its schema refuses, naming the file and path', async () => {
    const error = await bootError({ streams: { places: { ...places, geo: { field: 'location', radius_km: -3 } } } });
    expect(error?.message).toMatch(/streams\/places\.json at \/geo\/radius_km: must be > 0/);
    const unknownKey = await bootError({ streams: { places: { ...places, geo: { field: 'location', index: true } } } });
    expect(unknownKey?.message).toMatch(/places\.json at \/geo/);
    expect(unknownKey?.message).toMatch(/index/);
  });

  it('is refused at boot when geo.field is not a geopoint field of the stream', async () => {
    const notPoint = await bootError({ streams: { places: { ...places, geo: { field: 'name' } } } });
    expect(notPoint?.message).toMatch(/places\.json at \/geo\/field: names \[name\], a field of type \[string\]; it must be a geopoint field/);
    const missing = await bootError({ streams: { places: { ...places, geo: { field: 'where' } } } });
    expect(missing?.message).toMatch(/at \/geo\/field: names \[where\], which is not a field of stream \[places\]/);
  });

  it('applies to streams created over the API: 409 for a bad geo, precision honoured', async () => {
    await boot();
    const bad = await app!.request('POST', '/api/streams', { id: 'shops', fields: { id: 'integer', name: 'string' }, geo: { field: 'name' } });
    expect(bad.status).toBe(409);
    expect(bad.json.errors[0].message).toMatch(/geopoint/);
    expect((await app!.request('GET', '/api/streams/shops')).status).toBe(404);

    const good = await app!.request('POST', '/api/streams', { id: 'shops', fields: { id: 'integer', at: 'geopoint' }, geo: { field: 'at', precision: 2 } });
    expect(good.status).toBe(201);
    const shop = await app!.request('POST', '/api/streams/shops/entries', { at: '48.85837,2.29448' });
    expect(shop.json.data.at).toEqual({ lat: 48.86, lng: 2.29 });
  });

  it('owns a top-level config section and emits a hook of its own, as a core plugin does (#17 item 2)', async () => {
    const rounded: unknown[] = [];
    // A listener of the addon's hook, from another plugin. The hook's type lives in the addon's
    // types.d.ts, which augments 'streams-kernel/addon' for its own program, not this one.
    const listener = definePlugin({ name: 'listener', register: ({ hooks }) => void hooks.on('geo.rounded' as never, (payload: unknown) => void rounded.push(payload)) });
    await boot({ config: { plugins: [addonDir], geo: { precision: 3 } }, plugins: [listener] });
    const created = await app!.request('POST', '/api/streams/places/entries', { name: 'Notre-Dame', location: { lat: 48.85296819, lng: 2.3499 } });
    expect(created.json.data.location).toEqual({ lat: 48.853, lng: 2.35 });
    expect(rounded).toEqual([{ stream: 'places', field: 'location', sent: { lat: 48.85296819, lng: 2.3499 }, stored: { lat: 48.853, lng: 2.35 } }]);
    // Nothing rounded, nothing announced.
    await app!.request('POST', '/api/streams/places/entries', { name: 'Pin', location: { lat: 1.5, lng: 2 } });
    expect(rounded).toHaveLength(1);
    await app!.close();
    app = undefined;
    // Its section is validated like the kernel's: file and path named; without the addon the key is refused.
    expect((await bootError({ config: { plugins: [addonDir], geo: { precision: 'fine' } } }))?.message).toMatch(/at \/geo\/precision: must be integer/);
    const unowned = await startApp({ streams: { notes: { fields: { id: 'integer' } } }, config: { geo: { precision: 3 } } }).catch((e: unknown) => e as Error);
    expect((unowned as Error).message).toMatch(/at \/geo: is not a known key: no loaded plugin owns a "geo" section/);
  });

  it('makes definitions using geopoint fail at boot when the addon is not loaded', async () => {
    const error = await startApp({ streams: { places: { fields: places.fields } } }).then(
      (started) => {
        app = started;
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/places\.json at \/fields\/location\/type: .*geopoint/);
  });
});
