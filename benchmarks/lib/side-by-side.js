// Side by side (issue #33): two servers loaded at the same time, both pinned to the one server
// core, each by its own wrk on the load core. The core's time is shared between them, so the
// ratio of their two rates over the same seconds is the ratio of what a request costs each.
// Whatever slows the machine during a round (on this VM a server alone moves 30-50% between
// runs, its neighbours' load and the shared caches) slows both alike: the rounds' ratios spread
// over a few percent where the ratio of rates measured one after the other spreads over 20%.
//
// That holds while the server core is saturated. Both wrk share the load core, and a wrk spends
// several microseconds per request (mostly in the kernel), not far from what a server does: were
// the load core to run short, the server core would idle part of each round and the ratio would
// be partly the clients'. How busy the server core was (`serverBusy`, when `core` samples it)
// shows whether it did (97-100% in the quick runs of 2026-11-27).
import { median, ratio } from './stats.js';

/**
 * `rounds` rounds of `a` and `b` at once (`run(target)` is one wrk run of it); which of the two
 * is started first alternates. The verdict is the median of the rounds' ratios a / b.
 * `core` (optional): `sample()` and `share(before, after)` of the server core's busy time.
 */
export async function sideBySide({ a, b, rounds, run, log, core = null }) {
  const out = [];
  for (let round = 0; round < rounds; round++) {
    const before = core?.sample() ?? null;
    const [ra, rb] = round % 2 ? (await Promise.all([run(b), run(a)])).reverse() : await Promise.all([run(a), run(b)]);
    const busy = core ? core.share(before, core.sample()) : null;
    const r = ratio(ra.rps, rb.rps);
    out.push({ a: ra.rps, b: rb.rps, ratio: r, errorsA: ra.errors ?? 0, errorsB: rb.errors ?? 0, serverBusy: busy });
    const busyText = busy === null ? '' : `, server core busy ${Math.round(busy * 100)}%`;
    log(`${a.name} / ${b.name} side by side, round ${round + 1}/${rounds}: ${Math.round(ra.rps)} / ${Math.round(rb.rps)} req/s = ${r === null ? '-' : r.toFixed(3)}${busyText}${ra.errors || rb.errors ? `  ERRORS ${ra.errors} / ${rb.errors}` : ''}`);
  }
  const ratios = out.map((r) => r.ratio).filter((r) => r !== null).sort((x, y) => x - y);
  return {
    a: a.name,
    b: b.name,
    ratio: median(ratios),
    low: ratios[0] ?? null,
    high: ratios[ratios.length - 1] ?? null,
    serverBusy: median(out.map((r) => r.serverBusy)),
    errors: out.reduce((sum, r) => sum + r.errorsA, 0),
    rounds: out,
  };
}
