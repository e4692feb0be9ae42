import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';

/** Issue #20 item 4: field messages as documented, over the real API (each case failed before). */
describe('field messages', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      streams: {
        things: {
          fields: {
            id: 'integer',
            n: { type: 'integer', rules: ['min:3', 'max:5'] },
            tags: { type: 'array', rules: ['min:2'] },
            img: 'image',
            pin: 'hash',
            day: { type: 'string', rules: ['date_format:Y-m-d'] },
            note: { type: 'string', rules: ['filled'] },
            slug: 'slug',
          },
        },
      },
    });
  });
  afterAll(() => app.close());

  const errorsOf = async (body: Record<string, unknown>) => {
    const res = await app.request('POST', '/api/streams/things/entries', body);
    return { status: res.status, messages: (res.json.errors as Array<{ message: string }>).map((e) => e.message), data: res.json.data };
  };

  it('a value of the wrong type gets one message, not also the size rules', async () => {
    expect((await errorsOf({ n: [1, 2] })).messages).toEqual(['The n field must be an integer.']);
    expect((await errorsOf({ tags: 'x' })).messages).toEqual(['The tags field must be an array.']);
    // The size rule still speaks when the type is right.
    expect((await errorsOf({ n: 9 })).messages).toEqual(['The n field must not be greater than 5.']);
  });

  it('messages are grammatical: "an image"', async () => {
    expect((await errorsOf({ img: 5 })).messages).toEqual(['The img field must be an image path or URL.']);
  });

  it('a hash of "" is no value, not "must be a string"', async () => {
    const res = await errorsOf({ pin: '' });
    expect(res.status).toBe(201);
    expect(res.data.pin).toBeNull();
  });

  it('date_format requires a round trip (Laravel)', async () => {
    expect((await errorsOf({ day: '2024-2-3' })).messages).toEqual(['The day field must match the format Y-m-d.']);
    expect((await errorsOf({ day: '2024-02-30' })).messages).toEqual(['The day field must match the format Y-m-d.']);
    expect((await errorsOf({ day: '2024-02-29' })).status).toBe(201);
  });

  it('filled refuses null when present, and accepts it absent', async () => {
    expect((await errorsOf({ note: null })).messages).toEqual(['The note field must have a value.']);
    expect((await errorsOf({ note: '' })).messages).toEqual(['The note field must have a value.']);
    expect((await errorsOf({})).status).toBe(201);
  });

  it('slug transliterates instead of dropping letters', async () => {
    expect((await errorsOf({ slug: 'Straße' })).data.slug).toBe('strasse');
    expect((await errorsOf({ slug: 'Crème brûlée à Łódź' })).data.slug).toBe('creme-brulee-a-lodz');
    expect((await errorsOf({ slug: 'Привет мир' })).data.slug).toBe('privet-mir');
  });

  it('select with a string of options, or without config, says what options must be', async () => {
    for (const config of [{ options: 'a,b' }, undefined]) {
      const res = await app.request('POST', '/api/streams', { id: `sel${config ? 1 : 2}`, fields: { s: { type: 'select', ...(config ? { config } : {}) } } });
      expect(res.status).toBe(409);
      expect(res.json.errors[0].message).toMatch(/needs config\.options \(an object of value to label, or a list of values\)/);
    }
  });
});
