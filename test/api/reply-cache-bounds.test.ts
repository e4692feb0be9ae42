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

  it("answers one entry's GET by the entry object only while the cache holds that answer, and only for its own URL, scope and base (#33)", () => {
    const cache = new ReplyCache(3000, 2000);
    const one = (id: number): HttpRequest => ({ path: `/api/streams/planets/entries/${id}`, query: '' }) as HttpRequest;
    const entries = Array.from({ length: 6 }, (_, id) => ({ id }));
    const body = 'x'.repeat(900);
    cache.remember(one(1), '', 'http://h', definition, [entries[1]!], 1, body, '"1"');
    // The first hit goes through the URL, the next ones through the entry: the same answer.
    expect(cache.recallOne(one(1), '', 'http://h', definition, entries[1]!)?.etag).toBe('"1"');
    expect(cache.recallOne(one(1), '', 'http://h', definition, entries[1]!)?.etag).toBe('"1"');
    // Another URL for the entry (an encoded id), another rule set, another host, another object: no hit.
    expect(cache.recallOne({ path: '/api/streams/planets/entries/%31', query: '' } as HttpRequest, '', 'http://h', definition, entries[1]!)).toBeUndefined();
    expect(cache.recallOne(one(1), 'rules-b', 'http://h', definition, entries[1]!)).toBeUndefined();
    expect(cache.recallOne(one(1), '', 'http://other', definition, entries[1]!)).toBeUndefined();
    expect(cache.recallOne(one(1), '', 'http://h', definition, { id: 1 })).toBeUndefined();
    // Evicted by newer answers (the budget holds three): never answered from the entry's slot again.
    for (let id = 2; id <= 5; id++) cache.remember(one(id), '', 'http://h', definition, [entries[id]!], 1, body, `"${id}"`);
    expect(cache.bytes).toBeLessThanOrEqual(3000);
    expect(cache.recallOne(one(1), '', 'http://h', definition, entries[1]!)).toBeUndefined();
    expect(cache.recallOne(one(5), '', 'http://h', definition, entries[5]!)?.etag).toBe('"5"');
    // Replaced under its URL (a new version of the entry): the old object's slot answers nothing.
    cache.remember(one(5), '', 'http://h', definition, [{ id: 5 }], 1, body, '"5b"');
    expect(cache.recallOne(one(5), '', 'http://h', definition, entries[5]!)).toBeUndefined();
  });

  it('never keeps a body over the largest size', () => {
    const cache = new ReplyCache(1_000_000, 1000);
    cache.remember(request('big'), '', 'http://h', definition, [], 0, 'y'.repeat(5000), '"big"');
    expect(cache.recall(request('big'), '', 'http://h', definition, [], 0)).toBeUndefined();
  });
});
