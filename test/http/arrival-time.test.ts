import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { arrivalTime } from '../../plugins/http/request.js';

/** `startedAt` of a request read off a socket: one clock read per turn of the event loop (issue #33). */
describe('arrivalTime', () => {
  it('is one time for the requests of a turn, a later one in the next turn', async () => {
    const first = arrivalTime();
    const busy = performance.now() + 2;
    while (performance.now() < busy);
    // Read in the same turn: the turn's arrival, not the time of reading.
    expect(arrivalTime()).toBe(first);
    await nextTurn();
    const next = arrivalTime();
    expect(next).toBeGreaterThanOrEqual(first + 2);
    expect(next).toBeLessThanOrEqual(performance.now());
  });
});
