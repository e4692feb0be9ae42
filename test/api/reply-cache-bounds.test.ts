import { describe, expect, it } from 'vitest';
import { ReplyCache } from '../../plugins/api/endpoints/reply-cache.js';
import type { HttpRequest } from '../../plugins/http/index.js';
import type { StreamDefinition } from '../../plugins/streams/index.js';

const definition = { id: 'planets' } as StreamDefinition;
const request = (query: string): HttpRequest => ({ path: '/api/streams/planets/entries', query }) as HttpRequest;

describe('ReplyCache bounds', () => {
  it('keeps at most its byte budget, dropping the least recently used', () => {
    const cache = new ReplyCache(3000, 2000);
    const body = 'x'.repeat(900);
    for (let i = 0; i < 10; i++) cache.remember(request(`z=${i}`), '', 'http://h', definition, [], 0, body, `"${i}"`);
    const kept = Array.from({ length: 10 }, (_, i) => cache.recall(request(`z=${i}`), '', 'http://h', definition, [], 0)).filter(Boolean);
    expect(kept.length).toBeLessThanOrEqual(3);
    expect(cache.recall(request('z=9'), '', 'http://h', definition, [], 0)?.etag).toBe('"9"');
    expect(cache.recall(request('z=0'), '', 'http://h', definition, [], 0)).toBeUndefined();
  });

  it('stays within its budget with thousands of bodies, evicting in batches from the oldest (#16)', () => {
    const cache = new ReplyCache(100_000, 10_000);
    const body = 'x'.repeat(950);
    for (let i = 0; i < 20_000; i++) {
      cache.remember(request(`v=${i}`), '', 'http://h', definition, [], 0, body, `"${i}"`);
      expect(cache.bytes).toBeLessThanOrEqual(100_000);
    }
    expect(cache.recall(request('v=19999'), '', 'http://h', definition, [], 0)?.etag).toBe('"19999"');
    expect(cache.recall(request('v=0'), '', 'http://h', definition, [], 0)).toBeUndefined();
    const kept = Array.from({ length: 20_000 }, (_, i) => cache.recall(request(`v=${i}`), '', 'http://h', definition, [], 0)).filter(Boolean).length;
    // Between three quarters of the budget and all of it.
    expect(kept).toBeGreaterThanOrEqual(70);
    expect(kept).toBeLessThanOrEqual(104);
  });

  it('never keeps a body over the largest size', () => {
    const cache = new ReplyCache(1_000_000, 1000);
    cache.remember(request('big'), '', 'http://h', definition, [], 0, 'y'.repeat(5000), '"big"');
    expect(cache.recall(request('big'), '', 'http://h', definition, [], 0)).toBeUndefined();
  });
});
