import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../plugins/sources/cache/memory-cache-store.js';
import { ENTRIES } from '../../plugins/entries/index.js';
import { startApp } from '../helpers/app.js';

/** Issue #13 item 1: memory is bounded whatever the requests (distinct 1 MB filters once crashed the process). */
describe('memory stays bounded', () => {
  it('thousands of distinct long filters keep the caches within their byte budgets', async () => {
    const app = await startApp({
      streams: { notes: { config: { cache: { enabled: true } }, fields: { id: 'integer', text: 'string' } } },
      data: { notes: [{ id: 1, text: 'hello' }] },
      config: { streams: { caches: { match_bytes: 256 * 1024, results_bytes: 256 * 1024, replies_bytes: 256 * 1024 } } },
    });
    try {
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 2000; i++) {
        const value = `${i}-${'x'.repeat(1000)}`;
        const res = await app.request('GET', `/api/streams/notes/entries?where[text]=${value}&constraint[text]=!=`);
        expect(res.status).toBe(200);
      }
      // A value past the cap is refused outright, never matched or cached.
      expect((await app.request('GET', `/api/streams/notes/entries?where[text]=${'y'.repeat(2000)}`)).status).toBe(400);
      global.gc?.();
      // 2000 distinct 1 KB filters cached without bound would hold several MB of keys alone.
      expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await app.close();
    }
  });

  it('the result cache store counts bytes and skips huge keys', () => {
    const store = new MemoryCacheStore(10_000);
    for (let i = 0; i < 100; i++) store.set(`k${i}-${'z'.repeat(500)}`, Array.from({ length: 100 }), undefined);
    let kept = 0;
    for (let i = 0; i < 100; i++) if (store.get(`k${i}-${'z'.repeat(500)}`) !== undefined) kept++;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(10);
    store.set('q'.repeat(10_000), [], undefined);
    expect(store.get('q'.repeat(10_000))).toBeUndefined();
  });
});

describe('the serialized-entry cache', () => {
  // Issue #16 review: the JSON text of every entry read was kept for as long as the entry lived
  // (about 150 MB after reading each of 1M entries once). It now has a byte budget.
  it('keeps at most streams.caches.json_bytes of entry texts, and answers the same text either way', async () => {
    const app = await startApp({
      streams: { notes: { fields: { id: 'integer', text: 'string' } } },
      data: { notes: Array.from({ length: 60 }, (_, i) => ({ id: i + 1, text: `${i}-${'t'.repeat(2000)}` })) },
      config: { streams: { caches: { json_bytes: 16 * 1024, replies_bytes: 0 } } },
    });
    try {
      const entries = app.kernel.get(ENTRIES) as unknown as { json: { bytes: number; size: number } };
      for (let round = 0; round < 2; round++) {
        for (let id = 1; id <= 60; id++) {
          const res = await app.request('GET', `/api/streams/notes/entries/${id}`);
          expect(res.status).toBe(200);
          expect(res.json.data.text).toBe(`${id - 1}-${'t'.repeat(2000)}`);
          expect(entries.json.bytes).toBeLessThanOrEqual(16 * 1024);
        }
      }
      // About 4 KB a text: a handful fit, never all 60.
      expect(entries.json.size).toBeGreaterThan(0);
      expect(entries.json.size).toBeLessThan(10);
    } finally {
      await app.close();
    }
  });
});
