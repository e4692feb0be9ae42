import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** A third-party addon in its own folder with its own package.json, loaded by path from the config. */
const addon = fileURLToPath(new URL('../fixtures/addon-rating', import.meta.url));

const reviews = {
  name: 'Reviews',
  featured: { order: 2 },
  fields: { id: 'integer', title: 'string', stars: { type: 'rating', config: { max: 5 } } },
};

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('an addon loaded by path', () => {
  it('registers a field type that validates, casts and serializes entries', async () => {
    app = await startApp({ streams: { reviews }, config: { plugins: [addon] } });
    const created = await app.request('POST', '/api/streams/reviews/entries', { title: 'Great', stars: '4' });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ title: 'Great', stars: '★★★★' });

    const invalid = await app.request('POST', '/api/streams/reviews/entries', { title: 'Too good', stars: 9 });
    expect(invalid.status).toBe(409);
    expect(invalid.json.errors[0].meta).toMatchObject({ field: 'stars' });
  });

  it('adds a definition key whose schema is enforced and which the addon acts on at boot', async () => {
    app = await startApp({
      streams: { reviews, tips: { featured: { order: 1 }, fields: { id: 'integer' } }, plain: {} },
      config: { plugins: [addon] },
    });
    const featured = await app.request('GET', '/featured');
    expect(featured.json).toEqual(['tips', 'reviews']);
  });

  it('rejects an invalid value for the new key with a clear error naming file and path', async () => {
    const error = await startApp({
      streams: { reviews: { ...reviews, featured: { order: 0 } } },
      config: { plugins: [addon] },
    }).then(
      (started) => {
        app = started;
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(new RegExp(`${path.join('streams', 'reviews.json').replace(/[.]/g, '\\.')} at /featured/order: must be >= 1`));
  });

  it('is refused at boot when a definition uses its type but the addon is not loaded', async () => {
    const error = await startApp({ streams: { reviews: { fields: reviews.fields } } }).then(
      (started) => {
        app = started;
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/reviews\.json at \/fields\/stars\/type: .*rating/);
  });
});
